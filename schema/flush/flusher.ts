/**
 * The worker cache's flusher: owns the point buffer and the declarations queued since the last
 * flush, and sends them with the drop ledger's deltas as one `MetricsMessage`, holding back
 * while the channel is congested.
 */
import { METRICS_IPC_VERSION, METRICS_MESSAGE_TYPE } from '../ipc.js';
import type { MetricDecl, MetricsMessage, SeriesDecl } from '../ipc.js';
import { PointBuffer } from './point-buffer.js';
import type { DropLedger } from './drop-ledger.js';

/**
 * Where flushes go. In a worker: `process.send(m, cb)`, whose `false` means the channel's
 * backlog is full; then nothing more is sent until `done` is called (the message was written).
 * Returning nothing means "not congested". Errors are caught and logged. The typed arrays of
 * `msg` are views of recycled buffers, valid until the next flush: send, serialize or copy them
 * by then (`process.send` serializes before it returns).
 */
export type MetricsSend = (msg: MetricsMessage, done: () => void) => unknown;

/** Builds and sends one process's metrics messages (a worker's, or a front's). */
export class MetricsFlusher {
  /** Datapoints since the last flush; a full buffer flushes. */
  readonly buffer: PointBuffer;
  private pendingMetrics: MetricDecl[] = [];
  private pendingSeries: SeriesDecl[] = [];
  private nextSeriesId = 0;
  private seq = 0;
  /** Sequence number of the send whose completion we wait for (0: the channel is not congested). */
  private congestedOn = 0;
  private sends = 0;

  constructor(
    maxPointsPerFlush: number,
    nowMs: () => number,
    private readonly send: MetricsSend,
    private readonly ledger: DropLedger,
    private readonly log: (msg: string) => void,
  ) {
    this.buffer = new PointBuffer(
      maxPointsPerFlush,
      () => this.flush(),
      nowMs,
      () => ledger.drop('ipc_backpressure', '', 'the IPC channel to the frontend is congested and the backlog is full'),
    );
  }

  /** Allocates a series id and queues its declaration. */
  newSeries(metric: string, values: readonly string[]): number {
    const id = this.nextSeriesId++;
    this.pendingSeries.push({ id, metric, values });
    return id;
  }

  /** Queues an auto-detected metric's declaration. */
  declareMetric(decl: MetricDecl): void {
    this.pendingMetrics.push(decl);
  }

  /**
   * Sends everything buffered since the last flush as one message (new metric and series
   * declarations, the datapoints, their request ids, the drop deltas) and returns how many
   * datapoints it carried. Sends nothing when there is nothing to say. With `carry` the message
   * goes out through it (inside another message) instead of `send`.
   */
  flush(force = false, carry?: MetricsSend): number {
    const nothing =
      this.buffer.count === 0 &&
      this.pendingSeries.length === 0 &&
      this.pendingMetrics.length === 0 &&
      !this.ledger.pending;
    if (nothing || (this.congestedOn !== 0 && !force)) {
      // Congested: everything stays buffered (points up to the cap, then counted drops) until the channel drains.
      this.buffer.tick();
      return 0;
    }
    const taken = this.buffer.take();
    this.buffer.tick();
    const deltas = this.ledger.take();
    const msg: MetricsMessage = {
      type: METRICS_MESSAGE_TYPE,
      v: METRICS_IPC_VERSION,
      seq: this.seq++,
      metrics: this.pendingMetrics,
      series: this.pendingSeries,
      requestRuns: taken.requestRuns,
      requestIds: taken.requestIds,
      timeRuns: taken.timeRuns,
      dropped: deltas.dropped,
      overflowed: deltas.overflowed,
      // The two big arrays last: V8's serializer then grows its buffer for them without
      // copying them again for small fields behind them (about 1 ns per datapoint).
      seriesIds: taken.seriesIds,
      values: taken.values,
    };
    this.pendingMetrics = [];
    this.pendingSeries = [];
    const token = ++this.sends;
    let written = false;
    try {
      const ok = (carry ?? this.send)(msg, () => {
        written = true;
        if (this.congestedOn === token) this.drained();
      });
      if (ok === false && !written) this.congestedOn = token;
    } catch (e) {
      this.log(`[METRICS]Failed to send ${taken.count} datapoints to the frontend: ${(e as Error).message}`);
    }
    return taken.count;
  }

  /** The send we waited for was written: send what piled up meanwhile. */
  private drained(): void {
    this.congestedOn = 0;
    this.flush();
  }
}
