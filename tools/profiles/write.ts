/**
 * `npm run profiles`: rewrites metrics-vllm.yaml and tools/prometheus/vllm-names.rules.yml from
 * the repo's metrics.yaml (run after changing metrics.yaml; a test fails while they are stale).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { vllmProfileYaml, vllmRecordingRules } from './vllm-profile.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const source = fs.readFileSync(path.join(ROOT, 'metrics.yaml'), 'utf8');
for (const [file, text] of [
  ['metrics-vllm.yaml', vllmProfileYaml(source)],
  [path.join('tools', 'prometheus', 'vllm-names.rules.yml'), vllmRecordingRules(source)],
] as const) {
  fs.writeFileSync(path.join(ROOT, file), text);
  process.stdout.write(`wrote ${file}\n`);
}
