import type { Dashboard } from '@grafana/schema';
import d from '../tools/grafana/tsserve-serving.json' with { type: 'json' };
const x: Dashboard = d;
export { x };
