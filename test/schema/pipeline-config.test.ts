/** The `pipeline:` block of a model-config: validated once, every problem at once. */
import { expect } from 'chai';
import { parsePipelineSpec } from '../../schema/pipeline-config.js';

describe('parsePipelineSpec', () => {
  it('should take two stages with replicas and default chunkTokens to 4', () => {
    const problems: string[] = [];
    expect(
      parsePipelineSpec(
        {
          stages: [
            { name: 'thinker', model: 'tiny-lm', replicas: 2 },
            { name: 'code2wav', model: 'tiny-vocoder' },
          ],
        },
        problems,
      ),
    ).to.deep.equal({
      chunkTokens: 4,
      stages: [
        { name: 'thinker', model: 'tiny-lm', replicas: 2 },
        { name: 'code2wav', model: 'tiny-vocoder', replicas: 1 },
      ],
    });
    expect(problems).to.deep.equal([]);
  });

  it('should report every problem at once', () => {
    const problems: string[] = [];
    expect(
      parsePipelineSpec(
        {
          chunkTokens: 0,
          extra: 1,
          stages: [
            { name: 'a', model: '../x', replicas: 0 },
            { name: 'a', model: 'y' },
          ],
        },
        problems,
      ),
    ).to.equal(undefined);
    expect(problems).to.deep.equal([
      'pipeline.extra: unknown key (known: stages, chunkTokens)',
      'pipeline.chunkTokens: must be an integer >= 1 (got 0)',
      'pipeline.stages[0].model: must name a model directory of the store (got "../x")',
      "pipeline.stages[1].name: duplicate stage name 'a'",
    ]);
  });
});
