import { expect } from 'chai';
import type { FromFront, ModelSnapshot } from '../../../frontend/cluster/messages.js';
import {
  PrimaryLink,
  RemoteBatchedModel,
  RemoteGenerationModel,
  RemotePipelineModel,
} from '../../../frontend/cluster/remote-models.js';
import type { ModelConfig } from '../../../schema/worker-protocol.js';
import { traceIds } from '../../../frontend/metrics/exposition/trace-ids.js';

/** A model table entry whose one worker is `status` (a worker being replaced is STARTING). */
function snapshot(kind: string, minWorkers: number, status: string | null): ModelSnapshot {
  return {
    kind,
    config: { name: 'm', version: '1.0' } as unknown as ModelConfig,
    description: {
      modelName: 'm',
      modelVersion: '1.0',
      modelUrl: 'm',
      handler: 'h',
      kind,
      minWorkers,
      maxWorkers: 1,
      batchSize: 1,
      maxBatchDelay: 0,
      responseTimeout: 120,
      loadedAtStartup: true,
      workers: status === null ? [] : [{ id: 'W-1', pid: 1, status, startTime: '' }],
      jobQueueStatus: { remainingCapacity: 100, pendingRequests: 0 },
    },
  } as unknown as ModelSnapshot;
}

/** Waits for the link's per-turn job message. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("remote models (a front's proxies of the primary's models)", () => {
  const links: PrimaryLink[] = [];
  const link = (sent: FromFront[]): PrimaryLink => {
    const l = new PrimaryLink((m) => sent.push(m));
    links.push(l);
    return l;
  };
  after(() => {
    for (const l of links) l.close();
  });

  it("should relay a job while the model's worker is being replaced, as the primary queues it (regression: the stale table answered 503)", async () => {
    const sent: FromFront[] = [];
    const model = new RemoteBatchedModel(snapshot('batch', 1, 'STARTING'), link(sent));
    const result = model.submit({ requestId: 'r1', body: [1], arrivalMs: 0, done: () => undefined });
    await nextTurn();
    expect(result).to.equal('queued');
    expect(
      sent.map((m) => (m.type === 'tsserve.front.jobs' ? m.jobs.map((j) => [j.model, j.requestId]) : m.type)),
    ).to.deep.equal([[['m', 'r1']]]);
  });

  it("should refuse a job at once for a model scaled to 0 workers, as the primary's batcher does", async () => {
    const sent: FromFront[] = [];
    const model = new RemoteBatchedModel(snapshot('batch', 0, null), link(sent));
    const result = model.submit({ requestId: 'r1', body: [1], arrivalMs: 0, done: () => undefined });
    await nextTurn();
    expect([result, sent.length]).to.deep.equal(['unavailable', 0]);
  });

  it("should relay a generation with no engine ready in the table, so the primary's own 503 (its reason) is the answer", () => {
    const sent: FromFront[] = [];
    const model = new RemoteGenerationModel(snapshot('generate', 1, 'STARTING'), link(sent));
    const started = model.generate({ prompt: [1], params: {}, arrivalMs: 0 } as never, {
      onOutput: () => undefined,
      onError: () => undefined,
    });
    expect(['status' in started, sent.map((m) => [m.type, 'model' in m ? m.model : ''])]).to.deep.equal([
      false,
      [['tsserve.front.generate', 'm']],
    ]);
  });

  it('should relay a spoken request with no stage replica ready in the table, so the primary names the stage', () => {
    const sent: FromFront[] = [];
    const model = new RemotePipelineModel(snapshot('pipeline', 2, null), link(sent));
    const started = model.speak({ prompt: [1], params: {}, streamed: false, arrivalMs: 0 } as never, {
      onText: () => undefined,
      onAudio: () => undefined,
      onDone: () => undefined,
      onError: () => undefined,
    });
    expect(['status' in started, sent.map((m) => [m.type, 'model' in m ? m.model : ''])]).to.deep.equal([
      false,
      [['tsserve.front.speak', 'm']],
    ]);
  });

  it('should relay the trace id of a job and of a generation with the request (the primary records their exemplars)', async () => {
    const sent: FromFront[] = [];
    const l = link(sent);
    traceIds.set('r-traced', '4bf92f3577b34da6a3ce929d0e0e4736');
    new RemoteBatchedModel(snapshot('batch', 1, 'READY'), l).submit({
      requestId: 'r-traced',
      body: [1],
      arrivalMs: 0,
      done: () => undefined,
    });
    new RemoteGenerationModel(snapshot('generate', 1, 'READY'), l).generate(
      { prompt: [1], params: {}, arrivalMs: 0, traceId: '00f067aa0ba902b74bf92f3577b34da6' } as never,
      { onOutput: () => undefined, onError: () => undefined },
    );
    await nextTurn();
    const traces = sent.flatMap((m) =>
      m.type === 'tsserve.front.jobs'
        ? m.jobs.map((j) => j.traceId)
        : m.type === 'tsserve.front.generate'
          ? [m.traceId]
          : [],
    );
    expect(traces).to.deep.equal(['00f067aa0ba902b74bf92f3577b34da6', '4bf92f3577b34da6a3ce929d0e0e4736']);
  });
});
