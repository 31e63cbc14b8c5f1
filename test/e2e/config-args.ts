/** The metrics config the e2e servers use: the repo's metrics.yaml, i.e. the default (no flag). */
export function configArgs(): string[] {
  return [];
}
