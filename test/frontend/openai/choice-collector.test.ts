import { expect } from 'chai';
import type { GenRequestOutput } from '../../../schema/engine-ipc.js';
import { ChoiceCollector } from '../../../frontend/openai/choice-collector.js';

describe('ChoiceCollector', () => {
  const out: GenRequestOutput = {
    requestId: 'r',
    index: 0,
    newTokenIds: [97],
    text: 'a',
    events: [],
    logprobs: [{ id: 97, logprob: -0.5, top: [] }],
  };

  it("should not keep a stream's logprobs (they are sent with each chunk) and keep a plain answer's", () => {
    const stream = new ChoiceCollector([2], 1, false);
    const plain = new ChoiceCollector([2], 1);
    expect([stream.add(out)!.logprobs, plain.add(out)!.logprobs]).to.deep.equal([
      [],
      [{ id: 97, logprob: -0.5, top: [] }],
    ]);
    expect([stream.usage().completion_tokens, plain.usage().completion_tokens]).to.deep.equal([1, 1]);
  });

  it("should give a choice's usage with its tokens so far, or with the count it is given (a chat stream's role chunk: 0)", () => {
    const c = new ChoiceCollector([2], 1);
    const choice = c.add(out)!;
    expect([c.choiceUsage(choice), c.choiceUsage(choice, 0)]).to.deep.equal([
      { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } },
      { prompt_tokens: 2, completion_tokens: 0, total_tokens: 2, prompt_tokens_details: { cached_tokens: 0 } },
    ]);
  });
});
