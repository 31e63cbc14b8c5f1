/**
 * `npm run bench:channel` — the frontend ↔ worker channel's cost per batch, candidates side by
 * side on the light model's shapes: a batch of 32 requests (a request id each and 784 float32
 * inputs, one buffer) out, 32 answers of 10 numbers back, `DEPTH` batches in flight, a real
 * forked child. What is measured is CPU (user + system, `process.cpuUsage` in both processes)
 * per batch, so a busy machine skews the figures less than wall time would.
 *
 * - `advanced`: today's channel, Node's IPC with `serialization: 'advanced'`: the batch as one
 *   structured-clone message with a Float32Array, the answers as JS arrays the frontend
 *   `JSON.stringify`s per request before writing them.
 * - `framed`: a second stdio pipe beside the IPC channel carrying length-prefixed frames: the
 *   batch as a small JSON header (request ids, offsets) followed by the raw float32 bytes; the
 *   answers as the JSON text the worker wrote, each request's bytes one slice of the frame (the
 *   frontend writes them to the socket as they came: no parse, no string).
 *
 * A worker thread with transferred ArrayBuffers is not a candidate: a model that crashes in
 * native code (onnxruntime, a handler's addon) takes its whole process down, the frontend with it.
 * Lines: `channel_cpu_per_batch_framed_vs_advanced` (both processes) and
 * `channel_frontend_cpu_per_batch_framed_vs_advanced` (the frontend's side alone), µs per batch.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { smoke } from './smoke.js';

const BATCH = 32;
const WIDTH = 784;
const ANSWER = 10;
const DEPTH = 2;
const BATCHES = smoke(4000, 50);
const ROUNDS = smoke(3, 1);

type Mode = 'advanced' | 'framed';

/** Length-prefixed frames out of a byte stream: `onFrame` gets each whole frame's payload. */
class Deframer {
  private parts: Buffer[] = [];
  private have = 0;
  constructor(private readonly onFrame: (payload: Buffer) => void) {}
  push(chunk: Buffer): void {
    this.parts.push(chunk);
    this.have += chunk.length;
    for (;;) {
      if (this.have < 4) return;
      if (this.parts.length > 1) this.parts = [Buffer.concat(this.parts, this.have)];
      const buf = this.parts[0]!;
      const len = buf.readUInt32LE(0);
      if (this.have < 4 + len) return;
      this.onFrame(buf.subarray(4, 4 + len));
      const rest = buf.subarray(4 + len);
      this.parts = rest.length > 0 ? [rest] : [];
      this.have = rest.length;
    }
  }
}

/** One frame: a u32 length, a u32 header length, the JSON header, then `body` bytes. */
function frame(header: unknown, body: Uint8Array): Buffer {
  // Padded with spaces to a multiple of 4, so the body's floats are aligned in a whole frame.
  const text = JSON.stringify(header);
  const h = Buffer.from(text.padEnd(text.length + ((4 - ((text.length + 8) % 4)) % 4)));
  const out = Buffer.allocUnsafe(8 + h.length + body.length);
  out.writeUInt32LE(4 + h.length + body.length, 0);
  out.writeUInt32LE(h.length, 4);
  h.copy(out, 8);
  out.set(body, 8 + h.length);
  return out;
}

function unframe(payload: Buffer): { header: unknown; body: Buffer } {
  const hl = payload.readUInt32LE(0);
  return { header: JSON.parse(payload.toString('utf8', 4, 4 + hl)), body: payload.subarray(4 + hl) };
}

/** The worker's answer to a batch: 32 rows of 10 numbers (what the mlp's handler returns). */
function answers(data: Float32Array, n: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < n; i++) {
    const row: number[] = [];
    for (let j = 0; j < ANSWER; j++) row.push(data[i * WIDTH + j]! * 0.5 + j);
    out.push(row);
  }
  return out;
}

function child(mode: Mode): void {
  const report = (): void => {
    const c = process.cpuUsage();
    process.send!({ type: 'cpu', us: c.user + c.system });
  };
  if (mode === 'advanced') {
    process.on(
      'message',
      (m: { type: string; batchId: number; requests: unknown[]; tensors: { data: Float32Array } }) => {
        if (m.type === 'cpu') return report();
        const responses = answers(m.tensors.data, m.requests.length).map((body) => ({ ok: true, body }));
        process.send!({ type: 'result', batchId: m.batchId, responses, handlerMs: 0 });
      },
    );
    return;
  }
  const sock = new net.Socket({ fd: 4, readable: true, writable: true });
  process.on('message', (m: { type: string }) => {
    if (m.type === 'cpu') report();
  });
  const d = new Deframer((payload) => {
    const { header, body } = unframe(payload);
    const h = header as { batchId: number; requestIds: string[] };
    // A frame that arrived inside a larger chunk may sit at any offset: copied then.
    const aligned = body.byteOffset % 4 === 0 ? body : Buffer.from(body);
    const data = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.length / 4);
    const texts = answers(data, h.requestIds.length).map((a) => JSON.stringify(a));
    const bytes = Buffer.from(texts.join(''));
    const ends: number[] = [];
    let at = 0;
    for (const t of texts) ends.push((at += Buffer.byteLength(t)));
    sock.write(frame({ batchId: h.batchId, ends, handlerMs: 0 }, bytes));
  });
  sock.on('data', (c: Buffer) => d.push(c));
}

/** Runs BATCHES batches DEPTH at a time through a fresh child; µs CPU per batch, [both, frontend]. */
async function round(mode: Mode): Promise<[number, number]> {
  const c: ChildProcess = fork(import.meta.filename, ['child', mode], {
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc', 'pipe'],
  });
  const ids = Array.from({ length: BATCH }, (_v, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  const data = Float32Array.from({ length: BATCH * WIDTH }, (_v, i) => (i % 100) / 100);
  const offsets = Uint32Array.from({ length: BATCH + 1 }, (_v, i) => i * WIDTH);
  let written = 0;
  const sink = (b: Buffer | string): void => {
    written += b.length; // what the HTTP answers would write
  };
  const childCpu = (): Promise<number> =>
    new Promise((resolve) => {
      const on = (m: { type: string; us: number }): void => {
        if (m.type !== 'cpu') return;
        c.off('message', on);
        resolve(m.us);
      };
      c.on('message', on);
      c.send({ type: 'cpu' });
    });
  const run = (n: number): Promise<void> =>
    new Promise((resolve) => {
      let sent = 0;
      let done = 0;
      const send = (): void => {
        const batchId = sent++;
        if (mode === 'advanced') {
          const requests = ids.map((requestId) => ({ requestId, body: null }));
          c.send({ type: 'tsserve.batch', batchId, requests, tensors: { data, offsets } });
        } else {
          const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
          (c.stdio[4] as net.Socket).write(frame({ batchId, requestIds: ids, offsets: Array.from(offsets) }, bytes));
        }
      };
      const answered = (): void => {
        if (++done === n) resolve();
        else if (sent < n) send();
      };
      if (mode === 'advanced') {
        c.on('message', (m: { type: string; responses?: Array<{ body: unknown }> }) => {
          if (m.type !== 'result') return;
          for (const r of m.responses!) sink(JSON.stringify(r.body));
          answered();
        });
      } else {
        const d = new Deframer((payload) => {
          const { header, body } = unframe(payload);
          let from = 0;
          for (const end of (header as { ends: number[] }).ends) {
            sink(body.subarray(from, end) as Buffer);
            from = end;
          }
          answered();
        });
        (c.stdio[4] as net.Socket).on('data', (chunk: Buffer) => d.push(chunk));
      }
      for (let i = 0; i < DEPTH; i++) send();
    });
  await run(Math.max(10, BATCHES / 10)); // warm-up
  const self0 = process.cpuUsage();
  const child0 = await childCpu();
  await run(BATCHES);
  const self = process.cpuUsage(self0);
  const childUs = (await childCpu()) - child0;
  (c.stdio[4] as net.Socket).on('error', () => undefined); // the kill resets the pipe
  c.kill();
  if (written === 0) throw new Error('no answer was written');
  const frontUs = (self.user + self.system) / BATCHES;
  return [frontUs + childUs / BATCHES, frontUs];
}

async function main(): Promise<void> {
  const res: Record<Mode, Array<[number, number]>> = { advanced: [], framed: [] };
  for (let r = 0; r < ROUNDS; r++) for (const m of ['advanced', 'framed'] as const) res[m].push(await round(m));
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const line = (bench: string, i: 0 | 1): void => {
    const o = med(res.framed.map((x) => x[i]));
    const b = med(res.advanced.map((x) => x[i]));
    const r = (x: number): number => Math.round(x * 10) / 10;
    process.stdout.write(
      JSON.stringify({
        bench,
        ours: r(o),
        baseline: r(b),
        unit: 'µs CPU per batch of 32',
        ratio: Math.round((o / b) * 1000) / 1000,
      }) + '\n',
    );
  };
  line('channel_cpu_per_batch_framed_vs_advanced', 0);
  line('channel_frontend_cpu_per_batch_framed_vs_advanced', 1);
}

if (process.argv[2] === 'child') child(process.argv[3] as Mode);
else if (process.argv[1] === import.meta.filename) await main();
