/**
 * The management app over a fake model manager: what each route answers, exactly, for the
 * outcomes a real manager produces (workers that load, workers that fail, bounds).
 */
import { expect } from 'chai';
import * as http from 'http';
import type { AddressInfo } from 'net';
import { managementApp } from '../../../frontend/http/management-app.js';
import type { ManagementApp } from '../../../frontend/http/management-app.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import type { ModelManager, RegisterOptions } from '../../../frontend/models/model-manager.js';
import type { ModelDescription } from '../../../frontend/models/served-model.js';
import type { WorkerStatus } from '../../../frontend/workers/worker-process.js';
import { agreeing, sweepMethods } from '../../support/method-sweep.js';
import { until } from '../../support/until.js';
import { rawExchange, withoutDate } from '../../support/raw-http.js';
import { deferContinue } from '../../../frontend/http/expect-continue.js';
import { DEFAULT_BODY_LIMITS } from '../../../frontend/models/body-limits.js';

/** Metrics off: every series a no-op. */
const NO_METRICS: MetricsPort = {
  prometheusContentType: 'text/plain',
  modes: [],
  get: (): MetricHandle | null => null,
  byKey: (): MetricHandle | null => null,
  prometheusText: () => Promise.resolve(''),
  close: () => Promise.resolve(),
};

/** A model seen through the management API: its workers' statuses are what its pool would show. */
class FakeModel {
  readonly kind = 'batch';
  statuses: WorkerStatus[];
  /** What the workers of a scale end up as (default READY). */
  scaleTo: WorkerStatus = 'READY';
  constructor(
    public config: { name: string; version: string; minWorkers: number; maxWorkers: number },
    statuses: WorkerStatus[],
  ) {
    this.statuses = statuses;
  }
  describe(): ModelDescription {
    return {
      modelName: this.config.name,
      modelVersion: this.config.version,
      modelUrl: this.config.name,
      handler: './h.js',
      kind: 'batch',
      minWorkers: this.config.minWorkers,
      maxWorkers: this.config.maxWorkers,
      batchSize: 1,
      maxBatchDelay: 100,
      responseTimeout: 120,
      loadedAtStartup: false,
      workers: this.statuses.map((status, i) => ({
        id: `W-${9000 + i}-${this.config.name}_1.0`,
        pid: 100 + i,
        status,
        startTime: '2026-01-01T00:00:00.000Z',
      })),
      jobQueueStatus: { remainingCapacity: 100, pendingRequests: 0 },
    };
  }
  scale(min: number, max: number): Promise<void> {
    this.config = { ...this.config, minWorkers: min, maxWorkers: Math.max(min, max) };
    this.statuses = Array.from({ length: min }, (_, i) => this.statuses[i] ?? this.scaleTo);
    return Promise.resolve();
  }
}

/** The manager's slice the app uses; `registers` says what a registration's workers end up as. */
class FakeManager {
  readonly models = new Map<string, FakeModel>();
  readonly maxWorkers = 16;
  readonly registered: RegisterOptions[] = [];
  readonly unregistered: string[] = [];
  /** Worker statuses after a registration's start, by url. */
  readonly outcome = new Map<string, WorkerStatus[]>();
  /** model-config maxWorkers of a url (what its yaml says). */
  readonly yamlMax = new Map<string, number>();
  /** Times the app said the model table changed (the fronts are told at each). */
  changes = 0;
  onChange(): void {
    this.changes++;
  }
  get(name: string): FakeModel | undefined {
    return this.models.get(name);
  }
  list(): FakeModel[] {
    return [...this.models.values()].sort((a, b) => a.config.name.localeCompare(b.config.name));
  }
  scaleRefusal(name: string, min: number, max: number): string | null {
    return min > max ? `min_worker ${min} exceeds maxWorkers ${max} of model ${name} (raise it with max_worker)` : null;
  }
  register(opts: RegisterOptions): Promise<FakeModel> {
    this.registered.push(opts);
    const min = opts.overrides?.minWorkers ?? 1;
    const max = opts.overrides?.maxWorkers ?? this.yamlMax.get(opts.url) ?? Math.max(1, min);
    const m = new FakeModel(
      { name: opts.name, version: '1.0', minWorkers: min, maxWorkers: max },
      this.outcome.get(opts.url) ?? Array<WorkerStatus>(min).fill('READY'),
    );
    this.models.set(opts.name, m);
    return Promise.resolve(m);
  }
  unregister(name: string): Promise<boolean> {
    this.unregistered.push(name);
    return Promise.resolve(this.models.delete(name));
  }
}

describe('managementApp', () => {
  let manager: FakeManager;
  let server: http.Server;
  let app: ManagementApp;
  let base = '';

  beforeEach(async () => {
    manager = new FakeManager();
    app = managementApp({ manager: manager as unknown as ModelManager, series: new FrontendSeries(NO_METRICS) });
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function call(method: string, url: string): Promise<{ status: number; body: unknown }> {
    const r = await fetch(`${base}${url}`, { method });
    return { status: r.status, body: JSON.parse(await r.text()) as unknown };
  }

  function add(name: string, statuses: WorkerStatus[] = ['READY'], max = 4): FakeModel {
    const m = new FakeModel({ name, version: '1.0', minWorkers: statuses.length, maxWorkers: max }, statuses);
    manager.models.set(name, m);
    return m;
  }

  describe('GET /models', () => {
    const listed = (name: string): { modelName: string; modelVersion: string; modelUrl: string } => ({
      modelName: name,
      modelVersion: '1.0',
      modelUrl: name,
    });

    it('should page by limit and next_page_token in name order, with nextPageToken while more remain (regression: both ignored)', async () => {
      for (const n of ['c', 'a', 'd', 'b', 'e']) add(n);
      expect(await call('GET', '/models?limit=2')).to.deep.equal({
        status: 200,
        body: { nextPageToken: '2', models: [listed('a'), listed('b')] },
      });
      expect(await call('GET', '/models?limit=2&next_page_token=2')).to.deep.equal({
        status: 200,
        body: { nextPageToken: '4', models: [listed('c'), listed('d')] },
      });
      expect(await call('GET', '/models?limit=2&next_page_token=4')).to.deep.equal({
        status: 200,
        body: { models: [listed('e')] },
      });
      expect(await call('GET', '/models?next_page_token=9')).to.deep.equal({ status: 200, body: { models: [] } });
      expect(await call('GET', '/models')).to.deep.equal({
        status: 200,
        body: { models: ['a', 'b', 'c', 'd', 'e'].map(listed) },
      });
    });

    it("should list at most 100 models a page, a larger limit clamped (TorchServe's)", async () => {
      for (let i = 0; i < 102; i++) add(`m${String(i).padStart(3, '0')}`);
      const first = await call('GET', '/models?limit=500');
      const body = first.body as { nextPageToken: string; models: unknown[] };
      expect([first.status, body.nextPageToken, body.models.length]).to.deep.equal([200, '100', 100]);
      expect(await call('GET', '/models?next_page_token=100')).to.deep.equal({
        status: 200,
        body: { models: [listed('m100'), listed('m101')] },
      });
    });

    it('should refuse a limit or token that is not a count with 400 naming it', async () => {
      expect(await call('GET', '/models?limit=abc')).to.deep.equal({
        status: 400,
        body: {
          code: 400,
          type: 'BadRequestException',
          message: "parameter limit must be an integer from 1 to 2147483647 (got 'abc')",
        },
      });
      expect(await call('GET', '/models?limit=0')).to.deep.equal({
        status: 400,
        body: {
          code: 400,
          type: 'BadRequestException',
          message: "parameter limit must be an integer from 1 to 2147483647 (got '0')",
        },
      });
      expect(await call('GET', '/models?next_page_token=-1')).to.deep.equal({
        status: 400,
        body: {
          code: 400,
          type: 'BadRequestException',
          message: "parameter next_page_token must be an integer from 0 to 2147483647 (got '-1')",
        },
      });
    });
  });

  describe('parameters a route does not take', () => {
    const bad = (message: string): { status: number; body: unknown } => ({
      status: 400,
      body: { code: 400, type: 'BadRequestException', message },
    });

    it("should refuse a registration's unknown or TorchServe-only parameter with 400 naming it, registering nothing (regression: initial_worker=2 registered 1 worker)", async () => {
      expect(await call('POST', '/models?url=good&initial_worker=2')).to.deep.equal(
        bad(
          'parameter initial_worker is not one POST /models takes (it takes url, model_name, batch_size, max_batch_delay, initial_workers, response_timeout, synchronous)',
        ),
      );
      expect(await call('POST', '/models?url=good&handler=image_classifier')).to.deep.equal(
        bad(
          "parameter handler is not one POST /models takes: the model directory's model-config.yaml names its handler",
        ),
      );
      expect(await call('POST', '/models?url=good&startup_timeout=600')).to.deep.equal(
        bad(
          "parameter startup_timeout is not one POST /models takes: the server's --model-load-timeout bounds every worker's load",
        ),
      );
      const r = await fetch(`${base}/models`, {
        method: 'POST',
        body: '{"url": "good", "runtime": "python"}',
        headers: { 'content-type': 'application/json' },
      });
      expect({ status: r.status, body: JSON.parse(await r.text()) as unknown }).to.deep.equal(
        bad(
          "parameter runtime is not one POST /models takes: the model directory's model-config.yaml names its handler, which says how it runs",
        ),
      );
      expect(manager.registered).to.deep.equal([]);
    });

    it("should refuse a scale's unknown or TorchServe-only parameter with 400 naming it, scaling nothing (regression: min_workers=3 was a 202 that changed nothing)", async () => {
      const m = add('m', ['READY'], 4);
      expect(await call('PUT', '/models/m?min_workers=3')).to.deep.equal(
        bad(
          'parameter min_workers is not one PUT /models/{name} takes (it takes min_worker, max_worker, synchronous, timeout)',
        ),
      );
      expect(await call('PUT', '/models/m?min_worker=2&number_gpu=1')).to.deep.equal(
        bad("parameter number_gpu is not one PUT /models/{name} takes: tsserve's workers run on the CPU"),
      );
      expect(await call('PUT', '/models/m?min_worker=0&timeout=0')).to.deep.equal(
        bad(
          "parameter timeout must be -1 (got '0'): a worker a scale-down retires finishes what it holds first (a generation within the model's responseTimeout), as TorchServe's -1 waits",
        ),
      );
      expect(await call('PUT', '/models/m?min_worker=0&timeout=-1&timeout=-1')).to.deep.equal(
        bad('parameter timeout must be given once (got 2 values)'),
      );
      expect([m.config.minWorkers, manager.changes]).to.deep.equal([1, 0]);
      // TorchServe's default timeout, what a scale-down here does: taken.
      expect(await call('PUT', '/models/m?min_worker=2&timeout=-1&synchronous=true')).to.deep.equal({
        status: 200,
        body: { status: 'Workers scaled to 2 for model: m' },
      });
    });

    it('should refuse customized=true, which asks for a handler hook tsserve has not, and a customized that is not a boolean (regression: both answered the plain describe)', async () => {
      add('m');
      expect(await call('GET', '/models/m?customized=true')).to.deep.equal(
        bad(
          "parameter customized=true asks for the handler's customizedMetadata (TorchServe's describe_handle); tsserve's handlers have no such hook: leave it out",
        ),
      );
      expect(await call('GET', '/models/m/all?customized=yes')).to.deep.equal(
        bad("parameter customized must be true or false (got 'yes')"),
      );
      const plain = await call('GET', '/models/m');
      expect(await call('GET', '/models/m?customized=false')).to.deep.equal(plain);
      expect(plain.status).to.equal(200);
    });
  });

  describe('PUT /models/{name}/{version}/set-default', () => {
    it("should answer 200 for the model's version and 404 for another or an unknown model (regression: 404 for every request)", async () => {
      add('mlp');
      expect(await call('PUT', '/models/mlp/1.0/set-default')).to.deep.equal({
        status: 200,
        body: { status: 'Default version successfully updated for model "mlp" to "1.0"' },
      });
      expect(await call('PUT', '/models/mlp/2.0/set-default')).to.deep.equal({
        status: 404,
        body: { code: 404, type: 'ResourceNotFoundException', message: 'Model version 2.0 not found for model mlp' },
      });
      expect(await call('PUT', '/models/nope/1.0/set-default')).to.deep.equal({
        status: 404,
        body: { code: 404, type: 'ResourceNotFoundException', message: 'Model not found: nope' },
      });
    });
  });

  describe('a method a path does not take', () => {
    it('should answer TorchServe\'s 405 with the methods it takes (regression: 404 "Requested resource is not found" for a model that exists)', async () => {
      add('mlp');
      const answers = await Promise.all(
        [
          ['PATCH', '/models/mlp'],
          ['POST', '/models/mlp/1.0'],
          ['DELETE', '/models'],
          ['GET', '/models/mlp/1.0/set-default'],
        ].map(async ([method, url]) => {
          const r = await fetch(`${base}${url!}`, { method });
          return [r.status, r.headers.get('allow'), JSON.parse(await r.text()) as unknown];
        }),
      );
      const body = {
        code: 405,
        type: 'MethodNotAllowedException',
        message: 'Requested method is not allowed, please refer to API document.',
      };
      expect(answers).to.deep.equal([
        [405, 'GET, HEAD, PUT, DELETE', body],
        [405, 'GET, HEAD, PUT, DELETE', body],
        [405, 'GET, HEAD, POST', body],
        [405, 'PUT', body],
      ]);
      expect(await call('GET', '/nothing')).to.deep.equal({
        status: 404,
        body: {
          code: 404,
          type: 'ResourceNotFoundException',
          message: 'Requested resource is not found, please refer to API document.',
        },
      });
    });

    it('should derive its 405s from its routes: every routed path, its Allow exactly the methods its routes take (regression: a second table beside the routes)', async () => {
      const routed = [
        ['/models', 'GET, HEAD, POST'],
        ['/models/:name{/:version}', 'GET, HEAD, PUT, DELETE'],
        ['/models/:name/:version/set-default', 'PUT'],
      ];
      expect([...app.allowed]).to.deep.equal(routed);
      expect(await sweepMethods(base, app.allowed)).to.deep.equal(
        routed.map(([path, allow]) => agreeing(path!, allow!)),
      );
      expect(manager.registered).to.deep.equal([]); // POST /models without a url registers nothing
    });
  });

  describe('POST /models (synchronous)', () => {
    it('should answer 200 with the number of workers that loaded', async () => {
      expect(await call('POST', '/models?url=good&initial_workers=2')).to.deep.equal({
        status: 200,
        body: { status: 'Model "good" Version: 1.0 registered with 2 initial workers' },
      });
      expect(manager.unregistered).to.deep.equal([]);
    });

    it('should answer 500 and undo the registration when none of its workers loads (regression: 200 "registered with 1 initial workers")', async () => {
      manager.outcome.set('broken', ['DEAD']);
      expect(await call('POST', '/models?url=broken')).to.deep.equal({
        status: 500,
        body: {
          code: 500,
          type: 'InternalServerException',
          message:
            'Failed to start workers for model broken: none of its 1 workers loaded (the reason is in ts_log.log); the model is not registered',
        },
      });
      expect(manager.unregistered).to.deep.equal(['broken']);
      expect(manager.get('broken')).to.equal(undefined);
    });

    it('should answer 409 when the model was unregistered while its workers started (regression: 500 "Failed to start workers ... the reason is in ts_log.log")', async () => {
      let release: () => void = () => undefined;
      const register = manager.register.bind(manager);
      manager.register = (opts: RegisterOptions): Promise<FakeModel> =>
        register(opts).then(
          (m) =>
            new Promise<FakeModel>((resolve) => {
              // What the unregister left of its pool: no worker.
              release = () => {
                m.statuses = [];
                resolve(m);
              };
            }),
        );
      const first = call('POST', '/models?url=gone');
      await until(() => manager.get('gone') !== undefined, { message: 'the registration reached the manager' });
      expect(await call('DELETE', '/models/gone')).to.deep.equal({
        status: 200,
        body: { status: 'Model "gone" unregistered' },
      });
      release();
      expect(await first).to.deep.equal({
        status: 409,
        body: {
          code: 409,
          type: 'ConflictStatusException',
          message: 'model gone was unregistered while its workers were starting; it is not registered',
        },
      });
      expect(manager.unregistered).to.deep.equal(['gone']);
    });

    it('should count only the workers that loaded when some did not', async () => {
      manager.outcome.set('half', ['READY', 'STARTING']);
      expect(await call('POST', '/models?url=half&initial_workers=2')).to.deep.equal({
        status: 200,
        body: { status: 'Model "half" Version: 1.0 registered with 1 initial workers' },
      });
    });
  });

  describe('POST /models?synchronous=false', () => {
    it('should answer TorchServe\'s 202 "Processing worker updates..." (regression: a body of its own, "Model \\"x\\" registered; workers starting")', async () => {
      expect(await call('POST', '/models?url=bg&initial_workers=2&synchronous=false')).to.deep.equal({
        status: 202,
        body: { status: 'Processing worker updates...' },
      });
      expect(manager.get('bg')?.config.minWorkers).to.equal(2);
    });

    it('should answer 200 "registered with 0 initial workers" when it starts none, as TorchServe does (regression: 202 promising worker updates that never come)', async () => {
      expect(await call('POST', '/models?url=idle&initial_workers=0&synchronous=false')).to.deep.equal({
        status: 200,
        body: {
          status:
            'Model "idle" Version: 1.0 registered with 0 initial workers. Use scale workers API to add workers for the model.',
        },
      });
    });
  });

  describe('POST /models with a JSON body (TorchServe reads its parameters there too)', () => {
    async function post(
      body: string,
      url = '/models',
      type = 'application/json',
    ): Promise<{ status: number; body: unknown }> {
      const r = await fetch(`${base}${url}`, { method: 'POST', body, headers: { 'content-type': type } });
      return { status: r.status, body: JSON.parse(await r.text()) as unknown };
    }
    const bad = (message: string): { status: number; body: unknown } => ({
      status: 400,
      body: { code: 400, type: 'BadRequestException', message },
    });

    it('should register from the body\'s fields, numbers and booleans read as the query\'s text (regression: the body was dropped, 400 "Parameter url is required")', async () => {
      expect(
        await post('{"url": "good", "model_name": "g2", "batch_size": 4, "initial_workers": 2, "synchronous": true}'),
      ).to.deep.equal({ status: 200, body: { status: 'Model "g2" Version: 1.0 registered with 2 initial workers' } });
      expect(manager.registered.map((r) => [r.name, r.url, r.overrides])).to.deep.equal([
        ['g2', 'good', { batchSize: 4, minWorkers: 2, maxWorkers: 2 }],
      ]);
    });

    it('should refuse a body that is not an object of parameters, a field of another kind, a bad value and parameters in both places, each with 400 naming it', async () => {
      expect(await post('[1]')).to.deep.equal(
        bad('the JSON body of a registration must be an object of its parameters ({"url": "mlp", ...})'),
      );
      expect(await post('{"url": "good", "batch_size": [4]}')).to.deep.equal(
        bad('field batch_size of the JSON body must be a string, a number or a boolean (got [4])'),
      );
      expect(await post('{"url": "good", "batch_size": 1.5}')).to.deep.equal(
        bad("parameter batch_size must be an integer from 1 to 1024 (got '1.5')"),
      );
      expect(await post('{"url": "good"}', '/models?batch_size=2')).to.deep.equal(
        bad("give the registration's parameters in the query or in a JSON body, not both"),
      );
      expect(await post('{"url": ')).to.deep.equal(bad('invalid JSON body: Unexpected end of JSON input'));
      // A key written twice is the query's parameter given twice (JSON.parse kept the last: 'good' was registered).
      expect(await post('{"url": "nope", "url": "good", "\\u0075rl": "good"}')).to.deep.equal(
        bad('parameter url must be given once (got 3 values)'),
      );
      expect(manager.registered).to.deep.equal([]);
    });

    it('should say a body that is not JSON was not read when the url is missing (regression: curl -d \'{"url": …}\' sends it as a form, and heard only "Parameter url is required")', async () => {
      const unread = (type: string): unknown =>
        bad(
          `Parameter url is required (a model directory inside the model store). The body was not read: its Content-Type is ${type}; give the parameters in the query, or as a JSON body with Content-Type: application/json.`,
        );
      expect(await post('{"url": "good"}', '/models', 'application/x-www-form-urlencoded')).to.deep.equal(
        unread('application/x-www-form-urlencoded'),
      );
      expect(await post('url=good', '/models', 'text/plain;charset=utf-8')).to.deep.equal(unread('text/plain'));
      expect(await post('', '/models', 'text/plain')).to.deep.equal(
        bad('Parameter url is required (a model directory inside the model store).'),
      );
      expect(manager.registered).to.deep.equal([]);
    });

    it('should still read the query, and drop a body that is not JSON', async () => {
      expect(await post('url=other', '/models?url=good', 'text/plain')).to.deep.equal({
        status: 200,
        body: { status: 'Model "good" Version: 1.0 registered with 1 initial workers' },
      });
    });
  });

  describe('POST /models?model_name=', () => {
    it('should refuse a name longer than a directory name can be (regression: 1500 characters were registered and every metric of its workers dropped)', async () => {
      expect(await call('POST', `/models?url=good&model_name=${'m'.repeat(256)}`)).to.deep.equal({
        status: 400,
        body: {
          code: 400,
          type: 'BadRequestException',
          message: "model name of 256 characters is too long (at most 255, as a model directory's name)",
        },
      });
      expect(manager.registered).to.deep.equal([]);
      expect((await call('POST', `/models?url=good&model_name=${'m'.repeat(255)}`)).status).to.equal(200);
    });
  });

  describe('POST /models?initial_workers=', () => {
    it('should keep the model-config maxWorkers for initial_workers=0, so min_worker can scale it up (regression: maxWorkers 0, every scale a 400)', async () => {
      manager.yamlMax.set('later', 2);
      expect(await call('POST', '/models?url=later&initial_workers=0')).to.deep.equal({
        status: 200,
        body: {
          status:
            'Model "later" Version: 1.0 registered with 0 initial workers. Use scale workers API to add workers for the model.',
        },
      });
      expect(manager.registered[0]?.overrides).to.deep.equal({ minWorkers: 0 });
      expect(await call('PUT', '/models/later?min_worker=2&synchronous=true')).to.deep.equal({
        status: 200,
        body: { status: 'Workers scaled to 2 for model: later' },
      });
    });

    it('should set both bounds to a non-zero initial_workers, as TorchServe does', async () => {
      expect(await call('POST', '/models?url=two&initial_workers=2')).to.deep.equal({
        status: 200,
        body: { status: 'Model "two" Version: 1.0 registered with 2 initial workers' },
      });
      expect(manager.registered[0]?.overrides).to.deep.equal({ minWorkers: 2, maxWorkers: 2 });
    });
  });

  describe('PUT /models/{name}?synchronous=true', () => {
    it('should answer 500 naming how many are ready when the new workers do not start (regression: 200 "Workers scaled to 3")', async () => {
      const m = add('slow', ['READY'], 4);
      m.scaleTo = 'DEAD';
      expect(await call('PUT', '/models/slow?min_worker=3&synchronous=true')).to.deep.equal({
        status: 500,
        body: {
          code: 500,
          type: 'InternalServerException',
          message: 'Failed to start workers for model slow: 1 of 3 ready (the reason is in ts_log.log)',
        },
      });
    });

    it('should answer 409 when a later scale replaced it before its workers were up (not a 500 "Failed to start workers")', async () => {
      const m = add('slow', ['READY'], 4);
      let release: () => void = () => undefined;
      const scale = m.scale.bind(m);
      m.scale = (min: number, max: number): Promise<void> => {
        if (min !== 3) return scale(min, max);
        void scale(min, max);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      };
      const first = call('PUT', '/models/slow?min_worker=3&synchronous=true');
      await until(() => m.config.minWorkers === 3, { message: 'the first scale reached the model' });
      expect(await call('PUT', '/models/slow?min_worker=1&synchronous=true')).to.deep.equal({
        status: 200,
        body: { status: 'Workers scaled to 1 for model: slow' },
      });
      release();
      expect(await first).to.deep.equal({
        status: 409,
        body: {
          code: 409,
          type: 'ConflictStatusException',
          message: 'a later scale of model slow (to 1 workers) replaced this one (to 3)',
        },
      });
    });

    it('should answer 409 when the model was unregistered before the scale was done (regression: 500 "Failed to start workers for model slow: 0 of 3 ready")', async () => {
      const m = add('slow', ['READY'], 4);
      let release: () => void = () => undefined;
      const scale = m.scale.bind(m);
      m.scale = (min: number, max: number): Promise<void> => {
        void scale(min, max);
        return new Promise<void>((resolve) => {
          release = () => {
            m.statuses = [];
            resolve();
          };
        });
      };
      const first = call('PUT', '/models/slow?min_worker=3&synchronous=true');
      await until(() => m.config.minWorkers === 3, { message: 'the scale reached the model' });
      expect(await call('DELETE', '/models/slow')).to.deep.equal({
        status: 200,
        body: { status: 'Model "slow" unregistered' },
      });
      release();
      expect(await first).to.deep.equal({
        status: 409,
        body: {
          code: 409,
          type: 'ConflictStatusException',
          message: 'model slow was unregistered before this scale (to 3 workers) was done',
        },
      });
    });

    it('should name the version of /models/{name}/{version} in its answer, as TorchServe does (regression: the version was left out)', async () => {
      add('slow', ['READY'], 4);
      expect(await call('PUT', '/models/slow/1.0?min_worker=2&synchronous=true')).to.deep.equal({
        status: 200,
        body: { status: 'Workers scaled to 2 for model: slow, version: 1.0' },
      });
    });

    it('should answer 200 when they start', async () => {
      add('slow', ['READY'], 4);
      expect(await call('PUT', '/models/slow?min_worker=3&synchronous=true')).to.deep.equal({
        status: 200,
        body: { status: 'Workers scaled to 3 for model: slow' },
      });
      // When the scale is asked (the new minWorkers) and when its workers are up.
      expect(manager.changes).to.equal(2);
    });
  });
});

describe('managementApp with token auth', () => {
  const DENIED =
    '{"code":401,"type":"InvalidKeyException","message":"Token Authorization failed. Token either incorrect, expired, or not provided correctly"}';
  let manager: FakeManager;
  let server: http.Server;
  let base = '';

  beforeEach(async () => {
    manager = new FakeManager();
    // Body timeouts far past the test's: a body the app waited for would time the test out, not answer 408.
    const app = managementApp({
      manager: manager as unknown as ModelManager,
      series: new FrontendSeries(NO_METRICS),
      token: 'k3y',
      bodyLimits: { ...DEFAULT_BODY_LIMITS, timeoutMs: 600_000, idleTimeoutMs: 600_000 },
    });
    server = http.createServer(app);
    deferContinue(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const head = (headers: string): string =>
    `POST /models HTTP/1.1\r\nHost: localhost\r\ncontent-type: application/json\r\n${headers}\r\n`;
  const denied = `HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${DENIED.length}\r\n\r\n${DENIED}`;

  it('should answer 401 from the headers without a 100 Continue, and close rather than read the body (regression: the body was read first, up to --max-request-size)', async () => {
    const text = await rawExchange(base, {
      send: head('content-length: 500000\r\nexpect: 100-continue\r\n'),
      afterContinue: Buffer.alloc(500_000, 0x20),
    });
    expect(withoutDate(text)).to.equal(denied);
    expect(manager.registered).to.deep.equal([]);
  });

  it('should answer 401 and close while the body is still coming, without waiting for its rest', async () => {
    // 10 of 500000 bytes sent: the answer comes only if the app does not wait for the other 499990.
    const text = await rawExchange(base, { send: head('content-length: 500000\r\n') + '{"url": "g' });
    expect(withoutDate(text)).to.equal(denied);
    expect(manager.registered).to.deep.equal([]);
  });

  it('should keep the connection of a 401 without a body', async () => {
    const r = await fetch(`${base}/models`, { headers: { authorization: 'Bearer wrong' } });
    expect([r.status, r.headers.get('connection'), await r.text()]).to.deep.equal([401, 'keep-alive', DENIED]);
  });

  it('should send the 100 Continue and read the body of a request with the key', async () => {
    const body = '{"url": "good", "model_name": "g2"}';
    const text = await rawExchange(base, {
      send: head(
        `authorization: Bearer k3y\r\ncontent-length: ${body.length}\r\nexpect: 100-continue\r\nconnection: close\r\n`,
      ),
      afterContinue: body,
    });
    const answer = '{"status":"Model \\"g2\\" Version: 1.0 registered with 1 initial workers"}';
    expect(withoutDate(text)).to.equal(
      `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${answer.length}\r\nConnection: close\r\n\r\n${answer}`,
    );
    expect(manager.registered.map((r) => r.name)).to.deep.equal(['g2']);
  });
});
