/**
 * The least CPU the text sinks can cost a light request: the datapoints one `/predictions`
 * request records (TorchServe's three ts_* metrics, Requests2XX and the five HTTP metrics),
 * formatted with nothing but string concatenation (and the tslog sink's own timestamp and
 * value formatters, which the format needs) and written the cheapest way the formats allow — TorchServe metric log lines appended in 64 KiB writes, StatsD lines packed into 8 KiB
 * datagrams (the loopback size our StatsD sink uses). No metric objects, no caches, no
 * validation: a lower bound for what `--metrics-mode tslog,prometheus,statsd` must add to a
 * request, to set beside metrics_on_vs_off_light (bench:serve).
 */
import * as dgram from 'dgram';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { formatTslogTimestamp, formatTslogValue } from '../../frontend/metrics/sinks/tslog-format.js';

/** One request's datapoints: name, unit, a typical value, the dimension list as the log prints it. */
const POINTS: readonly (readonly [string, string, number, string])[] = [
  ['ts_inference_requests_total', 'Count', 1, 'model_name:mlp,model_version:default'],
  ['ts_inference_latency_microseconds', 'Microseconds', 8479.633, 'model_name:mlp,model_version:default'],
  ['ts_queue_latency_microseconds', 'Microseconds', 1333.79, 'model_name:mlp,model_version:default'],
  ['Requests2XX', 'Count', 1, 'Level:Host'],
  ['http_requests_total', 'Count', 1, 'handler:/predictions/{model}[/{version}],method:POST,status:2xx'],
  ['http_request_size_bytes', 'Bytes', 3828, 'handler:/predictions/{model}[/{version}]'],
  ['http_response_size_bytes', 'Bytes', 200, 'handler:/predictions/{model}[/{version}]'],
  ['http_request_duration_seconds', 'Seconds', 0.008989245, 'handler:/predictions/{model}[/{version}],method:POST'],
  ['http_request_duration_highr_seconds', 'Seconds', 0.008989245, ''],
];

const LOG_CHUNK = 64 * 1024;
const DATAGRAM = 8192;

/** Datapoints per request the floor formats. */
export const FLOOR_POINTS_PER_REQUEST = POINTS.length;

/**
 * CPU microseconds per request of the floor, over `requests` simulated requests (this process,
 * wherever it is pinned). StatsD datagrams go to `statsdPort` on 127.0.0.1 (a discarding socket).
 */
export async function sinkFloorUsPerRequest(statsdPort: number, requests = 100_000): Promise<number> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-sink-floor-'));
  const fd = fs.openSync(path.join(dir, 'ts_metrics.log'), 'w');
  const sock = dgram.createSocket('udp4');
  const host = os.hostname();
  try {
    let log = '';
    let datagram = '';
    const c0 = process.cpuUsage();
    for (let i = 0; i < requests; i++) {
      const now = Date.now();
      const stamp = formatTslogTimestamp(now);
      const tail = '|#hostname:' + host + ',timestamp:' + Math.floor(now / 1000) + '\n';
      for (const [name, unit, v0, dims] of POINTS) {
        const v = v0 + (i & 7);
        log += stamp + ' - ' + name + '.' + unit + ':' + formatTslogValue(v) + '|#' + dims + tail;
        const line = name + ':' + v + (unit === 'Count' ? '|c' : '|ms') + (dims === '' ? '' : '|#' + dims);
        if (datagram.length + line.length + 1 > DATAGRAM) {
          sock.send(datagram, statsdPort, '127.0.0.1');
          datagram = line;
        } else datagram = datagram === '' ? line : datagram + '\n' + line;
      }
      if (log.length >= LOG_CHUNK) {
        fs.writeSync(fd, log);
        log = '';
      }
      // Let the queued datagrams go out, as a server's event loop would between requests.
      if ((i & 1023) === 1023) await new Promise((r) => setImmediate(r));
    }
    if (log !== '') fs.writeSync(fd, log);
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / requests;
  } finally {
    sock.close();
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
