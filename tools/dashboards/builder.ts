/**
 * Collects the sections of one dashboard and the families its panels query, then derives the
 * template variables from those families: a variable exists only when some family carries its
 * label, and lists the values of that label on a series the dashboard shows.
 */
import type { MetricSpec } from '../../schema/types.js';
import type { Families } from './families.js';
import type { DashboardSpec, PanelSpec, Section, Variable } from './grafana.js';
import type { VarName } from './promql.js';
import { seriesName, varLabel } from './promql.js';

/** Builds one dashboard; `use` looks families up (and remembers them for the variables). */
export class DashboardBuilder {
  private readonly sections: Section[] = [];
  private readonly used: MetricSpec[] = [];

  constructor(
    private readonly families: Families,
    readonly vars: readonly VarName[],
  ) {}

  /** The first declared family among `keys`, or null; remembered for the variables. */
  use(...keys: readonly string[]): MetricSpec | null {
    const spec = this.families.get(...keys);
    if (spec !== null) this.used.push(spec);
    return spec;
  }

  /** Remembers families found another way (generic panels, self-metrics). */
  uses(specs: readonly MetricSpec[]): void {
    for (const s of specs) {
      this.families.claim(s);
      this.used.push(s);
    }
  }

  /** Adds a section unless it has no panels. */
  section(title: string, panels: ReadonlyArray<PanelSpec | null>): void {
    const present = panels.filter((p): p is PanelSpec => p !== null);
    if (present.length > 0) this.sections.push({ title, panels: present });
  }

  /** The dashboard, with one variable per label some used family carries. */
  build(uid: string, title: string, description: string): DashboardSpec {
    const variables: Variable[] = [];
    for (const v of this.vars) {
      const spec = this.used.find((s) => varLabel(s, v) !== null);
      if (spec === undefined) continue;
      const series = seriesName(spec, spec.type === 'histogram' ? 'count' : undefined);
      variables.push({ name: v, query: `label_values(${series}, ${varLabel(spec, v) as string})` });
    }
    return { uid, title, description, variables, sections: this.sections };
  }
}
