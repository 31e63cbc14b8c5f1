/** The metrics config the e2e servers use: the repo's metrics.yaml (the default). */
import * as fs from 'fs';
import * as path from 'path';
export function configArgs(): string[] {
  return fs.existsSync(path.resolve(__dirname, '../../../metrics.yaml')) ? [] : ['--metrics-config', '/work/shared/fixtures/torchserve-default-metrics.yaml'];
}
