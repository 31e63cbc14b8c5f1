/** The repo's metrics.yaml: the pipeline (vLLM-Omni) block, with vLLM-Omni's bucket lists. */
import { expect } from 'chai';
import { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } from '../../schema/config/load.js';

const SECONDS = '0.05,0.1,0.25,0.5,1,2,5,10,20,30,60,120,300';
const FAST = '0.001,0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,10,60';
// RTF's SLO line is 1.0: 0.9 and 1.25 sit either side of it; transfer payloads up to 256 MiB.
const RTF = '0.1,0.25,0.5,0.75,0.9,1,1.25,1.5,2,5,10';
const SIZE = '1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456';
const AUDIO = 'model_name,stage,replica';
const HOP = 'model_name,from_stage,from_replica,to_stage,to_replica';

describe('metrics.yaml pipeline block (repo root)', () => {
  it('should declare the pipeline, audio and transfer families with their labels and buckets', () => {
    const r = loadMetricsConfig(defaultMetricsConfigPath());
    if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
    const omni = r.config.metrics.filter((m) => m.name.startsWith('ts_omni_'));
    expect(
      omni.map((m) => `${m.type} ${m.name} ${m.unit} [${m.dimensions.join(',')}] ${m.buckets.join(',')}`),
    ).to.deep.equal([
      'counter ts_omni_requests_success_total Count [model_name,finished_reason] ',
      'counter ts_omni_prompt_tokens_total Tokens [model_name] ',
      'counter ts_omni_generation_tokens_total Tokens [model_name] ',
      `counter ts_omni_audio_frames_total Frames [${AUDIO}] `,
      `counter ts_omni_audio_continuity_ok_total Count [${AUDIO},threshold_ms] `,
      `counter ts_omni_audio_skipped_requests_total Count [${AUDIO},reason] `,
      'gauge ts_omni_num_requests_running Count [model_name] ',
      'gauge ts_omni_num_requests_waiting Count [model_name] ',
      `gauge ts_omni_stage_inflight_requests Count [${AUDIO}] `,
      `histogram ts_omni_e2e_request_latency_seconds Seconds [model_name] ${SECONDS}`,
      `histogram ts_omni_audio_ttfp_seconds Seconds [${AUDIO}] ${SECONDS}`,
      `histogram ts_omni_audio_duration_seconds Seconds [${AUDIO}] ${SECONDS}`,
      `histogram ts_omni_audio_rtf Ratio [${AUDIO}] ${RTF}`,
      `histogram ts_omni_audio_underrun_seconds Seconds [${AUDIO}] ${FAST}`,
      `histogram ts_omni_transfer_size_bytes Bytes [${HOP}] ${SIZE}`,
      `histogram ts_omni_transfer_tx_seconds Seconds [${HOP}] ${FAST}`,
      `histogram ts_omni_transfer_rx_seconds Seconds [${HOP}] ${FAST}`,
      `histogram ts_omni_transfer_in_flight_seconds Seconds [${HOP}] ${FAST}`,
    ]);
  });
});
