/**
 * Entry of one front process (`--api-server-count N`, forked by the primary through
 * node:cluster): it serves the inference listener on the shared port — body guards, JSON
 * bounds, tensor decoding, the OpenAI and Open Inference Protocol routes — and relays each
 * decoded request to the primary, which owns the models, the workers and the sinks. Its
 * metrics, access records and log lines are shipped to the primary (one writer per file).
 */
import { inferenceDocument } from '../openapi/inference-doc.js';
import { packageVersion } from '../../schema/config/stability.js';
import * as http from 'http';
import type { AddressInfo } from 'net';
import { accessLogListener } from '../http/access-log.js';
import { inferenceApp, sendInferenceError } from '../http/inference-app.js';
import { ProcessMetrics } from '../metrics/exposition/process-metrics.js';
import { openaiRouter } from '../openai/router.js';
import { FrontendSeries } from '../models/frontend-series.js';
import { inferenceSeriesOf } from '../models/inference-count.js';
import { drainGate } from '../http/drain-gate.js';
import { headerTimeoutOptions } from '../http/header-timeout.js';
import { clientErrorListener } from '../http/client-error.js';
import { deferContinue } from '../http/expect-continue.js';
import { HttpMetrics } from '../http/http-metrics.js';
import type { ServedModel } from '../models/served-model.js';
import type { FrontInit, FrontPing, FromFront, ModelSnapshot, ToFront } from './messages.js';
import { isFrontMessage } from './messages.js';
import { PrimaryLink, RemoteBatchedModel, RemoteGenerationModel, RemotePipelineModel } from './remote-models.js';
import { chatAudioHook, speechRouter } from '../openai/audio.js';
import { registerChatHook } from '../openai/chat-hooks.js';
import { FrontMetricsPort } from './front-port.js';
import { installStallHook } from './test-hooks.js';
import { RemoteEmbeddingModel } from './remote-embedding.js';
import { embeddingsRouter } from '../openai/embeddings-route.js';
import { Tracer } from '../tracing/otel-tracing.js';
import { setActiveTracer } from '../tracing/request-span.js';

/** Bound on the final close: past it, connections still open are cut. */
const CLOSE_TIMEOUT_MS = 10_000;

const send = (m: FromFront, cb?: () => void): boolean | void => {
  if (process.connected && process.send !== undefined) return process.send(m, undefined, {}, () => cb?.());
  cb?.();
};

function serve(init: FrontInit): void {
  const shipped = new FrontMetricsPort(init.metrics, init.processMetrics ? ['prometheus'] : [], send, {
    ...(init.maxPointsPerFlush !== undefined ? { maxPointsPerFlush: init.maxPointsPerFlush } : {}),
  });
  const series = new FrontendSeries(shipped);
  // This front's own tracer: it traces the requests it answers (its spans lost are only logged).
  const tracer =
    init.tracing !== undefined ? new Tracer(init.tracing, { log: (level, msg) => shipped.logLine(level, msg) }) : null;
  setActiveTracer(tracer);
  const link = new PrimaryLink((m) => send(m));
  const models = new Map<
    string,
    RemoteBatchedModel | RemoteGenerationModel | RemotePipelineModel | RemoteEmbeddingModel
  >();
  let health = init.health;
  const setModels = (list: readonly ModelSnapshot[]): void => {
    const seen = new Set<string>();
    for (const s of list) {
      seen.add(s.config.name);
      const m = models.get(s.config.name);
      if (m !== undefined && m.kind === s.kind) {
        m.snapshot = s;
        continue;
      }
      models.set(
        s.config.name,
        s.kind === 'generate'
          ? new RemoteGenerationModel(s, link, init.chatTemplate)
          : s.kind === 'pipeline'
            ? new RemotePipelineModel(s, link)
            : s.kind === 'embedding'
              ? new RemoteEmbeddingModel(s, link, series)
              : new RemoteBatchedModel(s, link, (model, reason) =>
                  series.bind('ts_image_refused_total', { model_name: model, reason }),
                ),
      );
    }
    for (const name of [...models.keys()]) if (!seen.has(name)) models.delete(name);
  };
  setModels(init.models);
  const list = (): ServedModel[] => [...models.values()].sort((a, b) => a.config.name.localeCompare(b.config.name));
  const generation = openaiRouter({
    lookup: (n) => {
      const m = models.get(n);
      return m instanceof RemoteGenerationModel ? m : undefined;
    },
    list: () => list().flatMap((m) => (m instanceof RemoteGenerationModel ? [m] : [])),
    listOthers: () =>
      list().flatMap((m) =>
        m instanceof RemotePipelineModel
          ? [{ id: m.config.name, maxModelLen: m.openaiListing.maxModelLen }]
          : m instanceof RemoteEmbeddingModel
            ? [{ id: m.config.name, ...m.openaiListing }]
            : [],
      ),
    bodyLimits: init.bodyLimits,
    inferenceSeries: inferenceSeriesOf(series),
    // A front has no engine to put to sleep: the primary's are all the models'.
    devMode: false,
    devModeOff: 'not served with --api-server-count above 1 (each front would sleep nothing)',
  });
  // Spoken answers (pipelines), as the pipeline kind mounts them on the primary.
  const pipeline = (n: string): RemotePipelineModel | undefined => {
    const m = models.get(n);
    return m instanceof RemotePipelineModel ? m : undefined;
  };
  registerChatHook(chatAudioHook(pipeline));
  const speech = speechRouter({ lookup: pipeline, bodyLimits: init.bodyLimits });
  const embeddings = embeddingsRouter({
    lookup: (n) => {
      const m = models.get(n);
      return m instanceof RemoteEmbeddingModel ? m : undefined;
    },
    exists: (n) => models.has(n),
    bodyLimits: init.bodyLimits,
  });
  const app = inferenceApp({
    lookup: (n) => models.get(n),
    list,
    series,
    maxRequestSizeBytes: init.maxRequestSizeBytes,
    bodyLimits: init.bodyLimits,
    ...(init.token !== undefined ? { token: init.token } : {}),
    extraRoutes: [generation, speech, embeddings],
    health: () => health,
    description: inferenceDocument(packageVersion()),
  });
  let draining = false;
  const server = http.createServer(headerTimeoutOptions(init.headerTimeoutMs));
  server.on(
    'request',
    accessLogListener('inference', (r) => shipped.accessRecord(r)),
  );
  server.on(
    'request',
    drainGate(
      app,
      () => draining,
      () => true,
      (s) => series.countResponse(s),
      new HttpMetrics((n, d) => series.bind(n, d)),
      sendInferenceError,
    ),
  );
  server.on(
    'clientError',
    clientErrorListener(
      'inference',
      (r) => shipped.accessRecord(r),
      (s) => series.countResponse(s),
    ),
  );
  deferContinue(server);
  server.keepAliveTimeout = 65_000;
  installStallHook((level, msg) => shipped.logLine(level, msg));
  const processMetrics = init.processMetrics ? new ProcessMetrics() : null;
  processMetrics?.withPeers(() => Promise.resolve([]));

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    draining = true;
    const finish = (): void => {
      link.close();
      // The spans still queued are exported (bounded) before the last metrics flush.
      void (tracer?.close() ?? Promise.resolve()).then(() => {
        void shipped.close();
        // The last flush is on the channel before `stopped` (IPC keeps order): the primary has it.
        send({ type: 'tsserve.front.stopped' }, () => process.exit(0));
      });
    };
    const timer = setTimeout(() => {
      server.closeAllConnections();
    }, CLOSE_TIMEOUT_MS);
    timer.unref();
    server.close(() => {
      clearTimeout(timer);
      finish();
    });
    server.closeIdleConnections();
  };

  process.on('message', (raw: unknown) => {
    if (!isFrontMessage(raw)) return;
    const m = raw as ToFront;
    switch (m.type) {
      case 'tsserve.front.done':
        link.done(m);
        break;
      case 'tsserve.front.dones':
        for (const d of m.done) link.done(d);
        break;
      case 'tsserve.front.gen':
        link.gen(m);
        break;
      case 'tsserve.front.speech':
        link.speech(m);
        break;
      case 'tsserve.front.models':
        setModels(m.models);
        health = m.health;
        break;
      case 'tsserve.front.drain':
        draining = true;
        break;
      case 'tsserve.front.stop':
        stop();
        break;
      case 'tsserve.front.scrape':
        void (processMetrics?.families() ?? Promise.resolve([])).then((families) =>
          send({ type: 'tsserve.front.process', id: m.id, families }),
        );
        break;
      case 'tsserve.front.init':
      case 'tsserve.front.ping':
        break;
    }
  });
  process.on('uncaughtException', (err) => {
    shipped.logLine('fatal', `uncaught exception: ${err.stack ?? err.message}`);
    shipped.flush(true);
    send({ type: 'tsserve.front.stopped' }, () => process.exit(1));
  });
  // A bind that fails (the port taken) is the primary's start-up error, worded as its own
  // listeners': thrown, it was an uncaught exception with a stack, and the start said only
  // 'front process N exited before listening'.
  const bindFailed = (e: NodeJS.ErrnoException): void => {
    send(
      { type: 'tsserve.front.listen-failed', ...(e.code !== undefined ? { code: e.code } : {}), message: e.message },
      () => process.exit(1),
    );
  };
  server.once('error', bindFailed);
  server.listen(init.port, init.host, () => {
    server.off('error', bindFailed);
    send({ type: 'tsserve.front.listening', port: (server.address() as AddressInfo).port });
  });
}

const onInit = (raw: unknown): void => {
  if (!isFrontMessage(raw)) return;
  // Stopped before its init (the primary began stopping while this front was being forked):
  // it has served nothing and has nothing to flush.
  if (raw.type === 'tsserve.front.stop') {
    send({ type: 'tsserve.front.stopped' }, () => process.exit(0));
    return;
  }
  if (raw.type !== 'tsserve.front.init') return;
  process.off('message', onInit);
  serve(raw as FrontInit);
};
process.on('message', onInit);
// The heartbeat is answered from this process's event loop from its hello on (before and after
// its init): a loop blocked for good leaves the pings unanswered, and the primary kills it.
process.on('message', (raw: unknown) => {
  if (isFrontMessage(raw) && raw.type === 'tsserve.front.ping')
    send({ type: 'tsserve.front.pong', seq: (raw as FrontPing).seq });
});
send({ type: 'tsserve.front.hello' });
// SIGINT/SIGTERM/SIGHUP reach the whole process group (Ctrl-C, a closed terminal): the primary
// decides when a front stops, and drains on each of them.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
process.on('SIGHUP', () => undefined);
