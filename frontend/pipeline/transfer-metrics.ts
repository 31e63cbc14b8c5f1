/**
 * The cross-stage transfer families (vLLM-Omni's OmniTransferMetrics), labelled `model_name,
 * from_stage, from_replica, to_stage, to_replica`; one observation per chunk hop. Clocks:
 * `tx` is the sender's (frontend) monotonic clock, `rx` the receiver's (worker) monotonic
 * clock, `in flight` the difference of two epoch readings (performance.timeOrigin +
 * performance.now()) taken in the two processes — never two processes' monotonic readings.
 */
import type { BoundSeries } from '../../schema/metrics-api.js';
import type { MetricsPort } from '../models/metrics-port.js';
import { bindOrNoop } from '../metrics/bind-or-noop.js';
import type { PipelineMetricName } from '../../schema/metric-catalog.js';

interface EdgeSeries {
  readonly size: BoundSeries;
  readonly tx: BoundSeries;
  readonly rx: BoundSeries;
  readonly inFlight: BoundSeries;
}

/** Transfer series of one hop (from one stage to the next) of one pipeline. */
export class TransferMetrics {
  private readonly byEdge = new Map<string, EdgeSeries>();

  constructor(
    private readonly metrics: Pick<MetricsPort, 'get'>,
    private readonly modelName: string,
    private readonly fromStage: string,
    private readonly toStage: string,
    private readonly enabled: boolean,
  ) {}

  /** The sender side of one chunk: its payload size and the time to serialise and submit it. */
  sent(fromReplica: number, toReplica: number, bytes: number, txSec: number): void {
    const e = this.of(fromReplica, toReplica);
    e.size.record(bytes);
    e.tx.record(txSec);
  }

  /** The receiver side of one chunk: receive + deserialise time, and sender done → receiver start. */
  received(fromReplica: number, toReplica: number, rxSec: number, inFlightSec: number): void {
    const e = this.of(fromReplica, toReplica);
    e.rx.record(rxSec);
    e.inFlight.record(inFlightSec);
  }

  private of(from: number, to: number): EdgeSeries {
    // Replica numbers are integers: "a/b" is unambiguous.
    const key = `${from}/${to}`;
    let e = this.byEdge.get(key);
    if (e === undefined) {
      const v = {
        model_name: this.modelName,
        from_stage: this.fromStage,
        from_replica: String(from),
        to_stage: this.toStage,
        to_replica: String(to),
      };
      const b = (name: PipelineMetricName): BoundSeries => bindOrNoop(this.metrics, name, v, this.enabled);
      e = {
        size: b('ts_omni_transfer_size_bytes'),
        tx: b('ts_omni_transfer_tx_seconds'),
        rx: b('ts_omni_transfer_rx_seconds'),
        inFlight: b('ts_omni_transfer_in_flight_seconds'),
      };
      this.byEdge.set(key, e);
    }
    return e;
  }
}
