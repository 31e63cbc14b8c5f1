/**
 * A pipeline runs one worker per replica of each stage, and `--max-workers` counts them all:
 * registering a pipeline whose replicas would take the server over the bound is refused with
 * the sum named, and the management API describes a pipeline with its configured total.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { call, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { omniStore } from './pipeline-helpers.js';

describe('pipelines and --max-workers (real tsserve start)', function () {
  this.timeout(180_000);
  let dir: string;
  let server: Tsserve;

  before(async () => {
    dir = tempDir('omni-workers');
    const store = omniStore(path.join(dir, 'store'), { omni3: { thinker: 2, code2wav: 1 } });
    server = await startTsserve({
      store,
      args: [
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--max-workers',
        '4',
        '--models',
        'tiny-omni=tiny-omni',
      ],
    });
  });

  after(() => {
    server?.kill();
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it('should count every stage replica against --max-workers and describe the pipeline with its total', async () => {
    const described = await call('GET', `${server.management}/models/tiny-omni`);
    const d = (described.json as Array<{ minWorkers: number; maxWorkers: number; workers: unknown[] }>)[0]!;
    const refused = await call('POST', `${server.management}/models?url=omni3&model_name=omni3`);
    expect([described.status, d.minWorkers, d.maxWorkers, d.workers.length, refused]).to.deep.equal([
      200,
      2,
      2,
      2,
      {
        status: 400,
        json: {
          code: 400,
          type: 'BadRequestException',
          message: '3 workers for model omni3 would bring the server to 5 workers, over --max-workers 4',
        },
      },
    ]);
  });

  it("should describe each stage with its model and its replicas' workers (the status page lists them)", async () => {
    const d = (
      (await call('GET', `${server.management}/models/tiny-omni`)).json as Array<{
        workers: Array<{ id: string }>;
        stages: Array<{
          stage: string;
          model: string;
          replicas: number;
          workers: Array<{ id: string; replica: number }>;
        }>;
      }>
    )[0]!;
    expect(d.stages.map((st) => [st.stage, st.model, st.replicas, st.workers.map((w) => w.replica)])).to.deep.equal([
      ['thinker', 'tiny-lm', 1, [0]],
      ['code2wav', 'tiny-vocoder', 1, [0]],
    ]);
    expect(d.stages.flatMap((st) => st.workers.map((w) => w.id))).to.deep.equal(d.workers.map((w) => w.id));
  });

  it('should refuse to scale a pipeline through the management API with 400, asynchronous or not, and leave it as it was', async () => {
    const refusal = {
      status: 400,
      json: {
        code: 400,
        type: 'BadRequestException',
        message: "model tiny-omni is a pipeline: its stages' replicas are set in its model-config.yaml",
      },
    };

    const answers = [
      await call('PUT', `${server.management}/models/tiny-omni?min_worker=1`),
      await call('PUT', `${server.management}/models/tiny-omni?min_worker=1&synchronous=true`),
    ];
    const d = (
      (await call('GET', `${server.management}/models/tiny-omni`)).json as Array<{
        workers: unknown[];
        jobQueueStatus: unknown;
      }>
    )[0]!;
    expect([...answers, d.workers.length]).to.deep.equal([refusal, refusal, 2]);
    // Idle: each stage's one replica takes 100 × maxNumSeqs (32) requests (--job-queue-size 0).
    expect(d.jobQueueStatus).to.deep.equal({ remainingCapacity: 3200, pendingRequests: 0 });
  });
});
