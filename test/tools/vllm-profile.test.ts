import { expect } from 'chai';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { VLLM_NAMES, vllmProfileYaml, vllmRecordingRules } from '../../tools/profiles/vllm-profile.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const read = (f: string): string => fs.readFileSync(path.join(ROOT, f), 'utf8');

describe('the vLLM profile files (npm run profiles)', () => {
  it('should regenerate exactly the committed metrics-vllm.yaml and vllm-names.rules.yml from metrics.yaml', () => {
    const source = read('metrics.yaml');
    expect(vllmProfileYaml(source)).to.equal(read('metrics-vllm.yaml'));
    expect(vllmRecordingRules(source)).to.equal(read('tools/prometheus/vllm-names.rules.yml'));
  });

  it('should refuse a metrics.yaml that lacks a family the profile renames, naming its key', () => {
    const yaml = [
      '# a file',
      'dimensions:',
      '  - &llm_model "model_name"',
      'ts_metrics:',
      '  counter:',
      '    - name: Requests2XX',
      '      unit: Count',
      '      help: "2xx"',
      '',
    ].join('\n');
    expect(() => vllmProfileYaml(yaml)).to.throw(
      `metrics.yaml declares no family with key ${Object.keys(VLLM_NAMES).join(', ')}`,
    );
    expect(() => vllmRecordingRules(yaml)).to.throw('metrics.yaml declares no family with key llm.prompt_tokens');
  });
});
