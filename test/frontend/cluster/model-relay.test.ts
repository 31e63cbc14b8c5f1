import { expect } from 'chai';
import type { Job } from '../../../frontend/batching/job.js';
import { ModelRelay } from '../../../frontend/cluster/model-relay.js';
import { GenerationModel } from '../../../frontend/generation/generation-model.js';
import type { ToFront } from '../../../frontend/cluster/messages.js';
import type { ServedModel } from '../../../frontend/models/served-model.js';
import { traceIds } from '../../../frontend/metrics/exposition/trace-ids.js';

/** A batched model that keeps what it was given (a fake inside this unit test only). */
function holdingModel(): { model: ServedModel; jobs: Job[] } {
  const jobs: Job[] = [];
  const model = {
    kind: 'batch',
    config: { name: 'm' },
    submit: (j: Job) => {
      jobs.push(j);
      return 'queued';
    },
  } as unknown as ServedModel;
  return { model, jobs };
}

describe('ModelRelay', () => {
  const job = (id: number) => ({
    type: 'tsserve.front.job' as const,
    id,
    model: 'm',
    requestId: `r${id}`,
    body: [1],
    arrivalEpochMs: performance.timeOrigin,
  });

  it('should mark a job in flight cancelled, and keep nothing for a cancel that crossed its answer', () => {
    const { model, jobs } = holdingModel();
    const sent: ToFront[] = [];
    const relay = new ModelRelay(
      () => model,
      (m) => {
        sent.push(m);
        return true;
      },
    );
    relay.job(job(1));
    relay.job(job(2));
    relay.cancel(1);
    expect([jobs[0]!.cancelled?.(), jobs[1]!.cancelled?.(), relay.jobsInFlight]).to.deep.equal([true, false, 2]);
    jobs[0]!.done({ status: 503, body: {}, queueUs: 0 });
    jobs[1]!.done({ status: 200, body: [0.5], queueUs: 3 });
    relay.cancel(2); // the front's cancel arrives after the answer left
    relay.cancel(7); // or for an id the primary never saw
    expect(relay.jobsInFlight).to.equal(0);
  });

  it("should answer a job its model refuses with the refusal's reason, which the front's route answers and counts as its own", async () => {
    const model = { kind: 'batch', config: { name: 'm' }, submit: () => 'queue_full' } as unknown as ServedModel;
    const sent: ToFront[] = [];
    const relay = new ModelRelay(
      () => model,
      (m) => {
        sent.push(m);
        return true;
      },
    );
    relay.job(job(1));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).to.deep.equal([
      {
        type: 'tsserve.front.dones',
        done: [
          {
            type: 'tsserve.front.done',
            id: 1,
            outcome: {
              status: 503,
              queueUs: 0,
              refused: 'queue_full',
              body: {
                code: 503,
                type: 'ServiceUnavailableException',
                message:
                  'Model "m" has no worker to serve inference request. Please use scale workers API to add workers. (job queue full)',
              },
            },
          },
        ],
      },
    ]);
  });

  it("should note the trace id a front relayed with a job or a generation, so the primary's exemplars carry it (regression: none through a front)", () => {
    const { model } = holdingModel();
    const relay = new ModelRelay(
      () => model,
      () => true,
    );
    relay.job({ ...job(1), requestId: 'traced-job', traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    relay.generate({
      type: 'tsserve.front.generate',
      id: 2,
      model: 'm',
      requestId: 'm-traced-gen',
      prompt: 'hi',
      params: { max_tokens: 1 },
      arrivalEpochMs: performance.timeOrigin,
      traceId: '00f067aa0ba902b74bf92f3577b34da6',
    });
    expect([traceIds.get('traced-job'), traceIds.get('m-traced-gen')]).to.deep.equal([
      '4bf92f3577b34da6a3ce929d0e0e4736',
      '00f067aa0ba902b74bf92f3577b34da6',
    ]);
  });

  it('should refuse a several-prompt request as a whole on its first prompt, as the route does without fronts, and start none of it (regression: the first prompts ran, then were aborted)', () => {
    const started: string[] = [];
    let free = 1;
    // A generation model's own class (the relay serves only those), with admits and generate of this test.
    const model = Object.assign(Object.create(GenerationModel.prototype) as GenerationModel, {
      admits: (n: number) =>
        n <= free ? null : { status: 503, message: `can take ${free}, this request has ${n} prompts` },
      generate: (req: { requestId?: string }) => {
        started.push(req.requestId ?? '');
        return { requestId: req.requestId ?? '', abort: () => undefined };
      },
    });
    const sent: ToFront[] = [];
    const relay = new ModelRelay(
      () => model,
      (m) => {
        sent.push(m);
        return true;
      },
    );
    const gen = (id: number, index: number, size: number) => ({
      type: 'tsserve.front.generate' as const,
      id,
      model: 'm',
      requestId: `r${id}`,
      prompt: 'x',
      params: { max_tokens: 1 },
      arrivalEpochMs: performance.timeOrigin,
      group: { size, index },
    });
    relay.generate(gen(1, 0, 2));
    relay.generate(gen(2, 1, 2));
    free = 2;
    relay.generate(gen(3, 0, 2));
    relay.generate(gen(4, 1, 2));
    expect(started).to.deep.equal(['r3', 'r4']);
    expect(sent).to.deep.equal([
      { type: 'tsserve.front.gen', id: 1, error: { status: 503, message: 'can take 1, this request has 2 prompts' } },
      { type: 'tsserve.front.gen', id: 3, accepted: true },
      { type: 'tsserve.front.gen', id: 4, accepted: true },
    ]);
  });
});
