import { expect } from 'chai';
import { healthOf } from '../../../frontend/models/health.js';
import type { ServedModel } from '../../../frontend/models/served-model.js';
import type { WorkerStatus } from '../../../frontend/workers/worker-process.js';

/** A model seen only through describe(): its minWorkers and its workers' statuses. */
function model(minWorkers: number, statuses: WorkerStatus[]): ServedModel {
  const workers = statuses.map((status, i) => ({ id: `W-${9000 + i}`, pid: 1, status, startTime: '' }));
  return { describe: () => ({ minWorkers, workers }) } as unknown as ServedModel;
}

describe('healthOf', () => {
  it('should be Healthy when every model has its minWorkers ready (or no model wants any)', () => {
    expect(healthOf([])).to.deep.equal({ ping: 'Healthy', serving: true });
    expect(healthOf([model(2, ['READY', 'BUSY']), model(0, [])])).to.deep.equal({ ping: 'Healthy', serving: true });
  });

  it('should be Partial Healthy when some of the wanted workers are ready, and not serving when a model has none', () => {
    expect(healthOf([model(2, ['READY', 'STARTING'])])).to.deep.equal({ ping: 'Partial Healthy', serving: true });
    expect(healthOf([model(1, ['READY']), model(1, ['STARTING'])])).to.deep.equal({
      ping: 'Partial Healthy',
      serving: false,
    });
  });

  it('should be Unhealthy when workers are wanted and none is ready (a STOPPING one does not count)', () => {
    expect(healthOf([model(1, ['STARTING']), model(2, ['STOPPING'])])).to.deep.equal({
      ping: 'Unhealthy',
      serving: false,
    });
  });

  it('should not let a model with more workers than its minWorkers cover for another', () => {
    expect(healthOf([model(1, ['READY', 'READY', 'READY']), model(1, [])])).to.deep.equal({
      ping: 'Partial Healthy',
      serving: false,
    });
  });
});
