/**
 * An OTLP/HTTP receiver for the tests: `POST /v1/metrics` and `POST /v1/traces` with protobuf
 * bodies, decoded with OpenTelemetry's own protobuf definitions (the opentelemetry-proto
 * messages as compiled in @opentelemetry/otlp-transformer 0.200's generated root, installed as
 * the dev dependency `otlp-proto-decoder`). No collector (otelcol, Jaeger) is installable here.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface Decoder {
  decode(buf: Uint8Array): unknown;
  toObject(msg: unknown, opts: Record<string, unknown>): unknown;
}
interface Root {
  opentelemetry: {
    proto: {
      collector: {
        metrics: { v1: { ExportMetricsServiceRequest: Decoder } };
        trace: { v1: { ExportTraceServiceRequest: Decoder } };
      };
    };
  };
}
const root = require('otlp-proto-decoder/build/src/generated/root.js') as Root;

/** protobufjs's toObject options: 64-bit ints as strings, ids as base64, each set oneof named in its `value`-style key. */
const TO_OBJECT = { longs: String, enums: String, bytes: String, defaults: false, arrays: true, oneofs: true };

/** A key/value attribute as decoded. */
export interface KeyValue {
  readonly key: string;
  readonly value: { stringValue?: string; intValue?: string; doubleValue?: number; boolValue?: boolean };
}

/** The decoded requests a receiver got, in arrival order. */
export interface OtlpReceiver {
  readonly url: string;
  readonly metrics: unknown[];
  readonly traces: unknown[];
  /** Status code answered to each next request (200 by default), to simulate a failing collector. */
  status: number;
  /** Requests answered with `status` other than 200 (each attempt of a retried export counts). */
  readonly refused: number;
  close(): Promise<void>;
}

/** Starts a receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const metrics: unknown[] = [];
  const traces: unknown[] = [];
  const state = { status: 200, refused: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (state.status !== 200) {
        state.refused++;
        res.writeHead(state.status).end();
        return;
      }
      try {
        const svc = root.opentelemetry.proto.collector;
        if (req.url === '/v1/metrics') {
          const d = svc.metrics.v1.ExportMetricsServiceRequest;
          metrics.push(d.toObject(d.decode(body), TO_OBJECT));
        } else if (req.url === '/v1/traces') {
          const d = svc.trace.v1.ExportTraceServiceRequest;
          traces.push(d.toObject(d.decode(body), TO_OBJECT));
        } else {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch (err) {
        res.writeHead(400).end(String(err));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    metrics,
    traces,
    get status() {
      return state.status;
    },
    set status(v: number) {
      state.status = v;
    },
    get refused() {
      return state.refused;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Attributes as a plain `{key: value}` object (the AnyValue oneof member that is set). */
export function attrs(list: readonly KeyValue[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const v = kv.value as Record<string, unknown>;
    const which = v.value as string;
    const x = v[which];
    out[kv.key] = which === 'intValue' ? Number(x) : (x as string | number | boolean);
  }
  return out;
}
