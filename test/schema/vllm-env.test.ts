import { expect } from 'chai';
import { vllmSwitch, vllmSwitchOn, vllmSwitchProblems } from '../../schema/vllm-env.js';

describe("schema/vllm-env: vLLM's on/off switches read as vLLM reads them (bool(int(value)))", () => {
  it('should read 0 and unset as off, and 1, 2, -1, " 1 ", +1 and 1_0 as on', () => {
    const on = (v: string | undefined): boolean => vllmSwitchOn('VLLM_SERVER_DEV_MODE', { VLLM_SERVER_DEV_MODE: v });
    expect([undefined, '', ' ', '0', '00', '-0', ' 0 '].map(on)).to.deep.equal([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(['1', '2', '-1', ' 1 ', '+1', '1_0', '007'].map(on)).to.deep.equal([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it('should refuse a value int() refuses, naming the variable and the value, and read it as off', () => {
    expect(vllmSwitch('VLLM_COMPUTE_NANS_IN_LOGITS', { VLLM_COMPUTE_NANS_IN_LOGITS: 'true' })).to.deep.equal({
      problem:
        'VLLM_COMPUTE_NANS_IN_LOGITS="true" is not a whole number: vLLM reads it with int(), 0 for off, 1 (any other whole number) for on',
    });
    expect(vllmSwitchOn('VLLM_COMPUTE_NANS_IN_LOGITS', { VLLM_COMPUTE_NANS_IN_LOGITS: 'yes' })).to.equal(false);
    expect(vllmSwitchProblems({ VLLM_SERVER_DEV_MODE: '1.0', VLLM_COMPUTE_NANS_IN_LOGITS: '1__0' })).to.deep.equal([
      'VLLM_SERVER_DEV_MODE="1.0" is not a whole number: vLLM reads it with int(), 0 for off, 1 (any other whole number) for on',
      'VLLM_COMPUTE_NANS_IN_LOGITS="1__0" is not a whole number: vLLM reads it with int(), 0 for off, 1 (any other whole number) for on',
    ]);
    expect(vllmSwitchProblems({ VLLM_SERVER_DEV_MODE: '1', VLLM_COMPUTE_NANS_IN_LOGITS: '0' })).to.deep.equal([]);
  });

  it('should echo at most 80 characters of a long value', () => {
    const s = vllmSwitch('VLLM_SERVER_DEV_MODE', { VLLM_SERVER_DEV_MODE: 'x'.repeat(10_000) });
    expect(s).to.deep.equal({
      problem: `VLLM_SERVER_DEV_MODE="${'x'.repeat(80)}…(9920 more)" is not a whole number: vLLM reads it with int(), 0 for off, 1 (any other whole number) for on`,
    });
  });
});
