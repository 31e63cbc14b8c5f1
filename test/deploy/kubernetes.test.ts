/**
 * deploy/kubernetes, validated offline: every manifest against the Kubernetes and CRD schemas
 * (kubernetes-models), every kustomization against its directory, the Deployment against
 * tsserve's own flags and drain, the autoscalers against prometheus-adapter's rules, the
 * generated files against their sources, and every PromQL they hold through promtool.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { dump, loadAll } from 'js-yaml';
import { Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject';
import { LOG_KEEP, LOG_MAX_BYTES } from '../../frontend/log/logger.js';
import { parseStartOptions } from '../../frontend/server/start-options.js';
import { staleK8sFiles } from '../../tools/k8s/sync.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const K8S = path.join(ROOT, 'deploy', 'kubernetes');

/** A parsed manifest (free-form YAML). */
type Doc = Readonly<Record<string, unknown>>;
/** The value at `keys` under `v` (undefined when a step is missing). */
function at(v: unknown, ...keys: readonly (string | number)[]): unknown {
  let cur = v;
  for (const k of keys) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>)[k] : undefined;
  return cur;
}
/** The array at `keys` (empty when absent). */
const list = (v: unknown, ...keys: readonly (string | number)[]): unknown[] => { const a = at(v, ...keys); return Array.isArray(a) ? (a as unknown[]) : []; };
/** The string at `keys` ('' when absent). */
const str = (v: unknown, ...keys: readonly (string | number)[]): string => { const a = at(v, ...keys); return typeof a === 'string' ? a : ''; };

/** The kubernetes-models class of each apiVersion/kind we ship. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'keda.sh/v1alpha1/ScaledObject': ScaledObject,
};

const read = (rel: string): Doc[] => loadAll(fs.readFileSync(path.join(K8S, rel), 'utf8')) as Doc[];
const one = (rel: string): Doc => read(rel)[0]!;
const kustomizations = ['base', 'keda', 'podmonitor'];
/** Files a kustomization reads that are not resources. */
const inputsOf = (k: Doc): string[] => list(k, 'configMapGenerator').flatMap((g) => list(g, 'files').map((f) => String(f).replace(/^[^=]*=/, '')));
/** The resources a kustomization lists. */
const resourcesOf = (k: Doc): string[] => list(k, 'resources').map(String);
/** Every manifest: the resources of every kustomization. */
const manifests = kustomizations.flatMap((dir) => resourcesOf(one(`${dir}/kustomization.yaml`)).filter((r) => r.endsWith('.yaml')).map((r) => `${dir}/${r}`));

/** True when promtool answers --version. */
const havePromtool = (): boolean => spawnSync('promtool', ['--version']).status === 0;

/** Runs `promtool check rules` on one recording rule per expression; returns its output and code. */
function promtoolCheck(exprs: Record<string, string>): { code: number | null; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-k8s-promql-'));
  try {
    const file = path.join(dir, 'exprs.yml');
    fs.writeFileSync(file, dump({ groups: [{ name: 'exprs', rules: Object.entries(exprs).map(([record, expr]) => ({ record, expr })) }] }));
    const r = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout + r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('deploy/kubernetes', () => {
  it('should validate every manifest of every kustomization against its Kubernetes or CRD schema', () => {
    const kinds: string[] = [];
    for (const rel of manifests) {
      for (const doc of read(rel)) {
        const key = `${str(doc, 'apiVersion')}/${str(doc, 'kind')}`;
        const Model = MODELS[key];
        expect(Model, `${rel}: ${key} has a schema here`).to.not.equal(undefined);
        expect(() => new Model!(doc as never).validate(), rel).to.not.throw();
        kinds.push(`${rel}: ${str(doc, 'kind')}/${str(doc, 'metadata', 'name')}`);
      }
    }
    expect(kinds).to.deep.equal([
      'base/deployment.yaml: Deployment/tsserve', 'base/service.yaml: Service/tsserve', 'base/servicemonitor.yaml: ServiceMonitor/tsserve',
      'base/prometheusrule.yaml: PrometheusRule/tsserve', 'base/hpa.yaml: HorizontalPodAutoscaler/tsserve',
      'keda/scaledobject.yaml: ScaledObject/tsserve', 'podmonitor/podmonitor.yaml: PodMonitor/tsserve',
    ]);
  });

  it('should reject a manifest the schema forbids (the validation is real): a string containerPort, a bad scrape interval', () => {
    const d = structuredClone(one('base/deployment.yaml'));
    (at(d, 'spec', 'template', 'spec', 'containers', 0, 'ports', 0) as Record<string, unknown>).containerPort = 'eighty';
    expect(() => new Deployment(d as never).validate()).to.throw('data/spec/template/spec/containers/0/ports/0/containerPort must be integer');
    const sm = structuredClone(one('base/servicemonitor.yaml'));
    (at(sm, 'spec', 'endpoints', 0) as Record<string, unknown>).interval = '15 seconds';
    expect(() => new ServiceMonitor(sm as never).validate()).to.throw('data/spec/endpoints/0/interval must match pattern');
  });

  it('should have each kustomization list every YAML file of its directory, and only files that exist', () => {
    for (const dir of kustomizations) {
      const k = one(`${dir}/kustomization.yaml`);
      const listed = resourcesOf(k).filter((r) => !r.startsWith('..'));
      const present = fs.readdirSync(path.join(K8S, dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && !inputsOf(k).includes(f));
      expect([...listed].sort(), dir).to.deep.equal(present.sort());
      for (const r of resourcesOf(k)) expect(fs.existsSync(path.join(K8S, dir, r)), `${dir}: ${r}`).to.equal(true);
      for (const f of inputsOf(k)) expect(fs.existsSync(path.join(K8S, dir, f)), `${dir}: ${f}`).to.equal(true);
    }
  });

  it('should have the patches of the variants delete exactly the base resource they replace', () => {
    const deleted = (dir: string): string[] => list(one(`${dir}/kustomization.yaml`), 'patches')
      .map((p) => `${str(p, 'target', 'kind')}/${str(p, 'target', 'name')}: ${str(loadAll(str(p, 'patch'))[0], '$patch')}`);
    expect(deleted('keda')).to.deep.equal(['HorizontalPodAutoscaler/tsserve: delete']);
    expect(deleted('podmonitor')).to.deep.equal(['ServiceMonitor/tsserve: delete']);
  });

  it('should have the generated metrics.yaml copy and PrometheusRule up to date (else: npm run k8s:sync)', () => {
    expect(staleK8sFiles(ROOT), 'stale files; run npm run k8s:sync').to.deep.equal([]);
  });

  it("should run the Deployment's args through tsserve start's own parser, with a grace period longer than preStop plus the drain", () => {
    const d = one('base/deployment.yaml');
    const pod = at(d, 'spec', 'template', 'spec');
    const c = at(pod, 'containers', 0);
    const args = list(c, 'args').map(String);
    expect(args[0]).to.equal('start');
    const parsed = parseStartOptions(args.slice(1), {});
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    const o = parsed.options;
    expect([o.inferenceAddress, o.managementAddress, o.metricsAddress, o.shutdownTimeout]).to.deep.equal(['http://0.0.0.0:8080', 'http://127.0.0.1:8081', 'http://0.0.0.0:8082', 25]);
    expect(at(c, 'ports')).to.deep.equal([{ name: 'http', containerPort: 8080 }, { name: 'metrics', containerPort: 8082 }]);
    expect(at(c, 'lifecycle', 'preStop', 'exec', 'command')).to.deep.equal(['sleep', '5']);
    expect(at(pod, 'terminationGracePeriodSeconds')).to.be.greaterThan(5 + o.shutdownTimeout);
    expect([at(c, 'readinessProbe', 'httpGet'), at(c, 'livenessProbe', 'httpGet')]).to.deep.equal([{ path: '/v2/health/ready', port: 'http' }, { path: '/v2/health/live', port: 'http' }]);
    expect(Object.keys(at(c, 'resources', 'requests') as object)).to.deep.equal(['cpu', 'memory']);
    expect(Object.keys(at(c, 'resources', 'limits') as object)).to.deep.equal(['memory']);
    // --metrics-config and --log-dir lie in mounted volumes; the config one is the generated ConfigMap.
    const mount = (file: string): string => str(list(c, 'volumeMounts').find((m) => file.startsWith(str(m, 'mountPath') + '/')), 'name');
    const volume = (name: string): unknown => list(pod, 'volumes').find((v) => str(v, 'name') === name);
    expect(str(volume(mount(o.metricsConfig ?? '')), 'configMap', 'name')).to.equal(str(one('base/kustomization.yaml'), 'configMapGenerator', 0, 'name'));
    expect(Object.keys(volume(mount(`${o.logDir}/ts_log.log`)) as object)).to.deep.equal(['name', 'emptyDir']);
    // The kubelet evicts a pod whose emptyDir passes its sizeLimit: it must hold what the tslog
    // sink keeps by design, 2 files x (1 + 5 rotated) x 100 MiB (the 1Gi it had did not, so the
    // pod was evicted under steady traffic), and the rotated access_log.log and ts_log.log.
    const sizeLimit = str(volume(mount(`${o.logDir}/ts_log.log`)), 'emptyDir', 'sizeLimit');
    const kept = 2 * (1 + 5) * 100 * 1024 * 1024 + 2 * (1 + LOG_KEEP) * LOG_MAX_BYTES;
    expect([sizeLimit, Number(/^(\d+)Gi$/.exec(sizeLimit)?.[1]) * 2 ** 30 - kept]).to.deep.equal(['4Gi', 1778384896]);
    expect(at(d, 'spec', 'selector', 'matchLabels')).to.deep.equal(at(d, 'spec', 'template', 'metadata', 'labels'));
  });

  it('should point the Service, the ServiceMonitor and the PodMonitor at the pods and their named ports', () => {
    const podLabels = at(one('base/deployment.yaml'), 'spec', 'template', 'metadata', 'labels');
    const svc = one('base/service.yaml');
    expect(at(svc, 'spec', 'selector')).to.deep.equal(podLabels);
    expect(list(svc, 'spec', 'ports').map((p) => [at(p, 'name'), at(p, 'port'), at(p, 'targetPort')])).to.deep.equal([['http', 8080, 'http'], ['metrics', 8082, 'metrics']]);
    const sm = one('base/servicemonitor.yaml');
    expect(at(sm, 'spec', 'selector', 'matchLabels')).to.deep.equal(at(svc, 'metadata', 'labels'));
    expect(list(sm, 'spec', 'endpoints').map((e) => [at(e, 'port'), at(e, 'path')])).to.deep.equal([['metrics', '/metrics']]);
    const pm = one('podmonitor/podmonitor.yaml');
    expect(at(pm, 'spec', 'selector', 'matchLabels')).to.deep.equal(podLabels);
    expect(list(pm, 'spec', 'podMetricsEndpoints').map((e) => [at(e, 'port'), at(e, 'path')])).to.deep.equal([['metrics', '/metrics']]);
  });

  it("should scale the HPA on exactly the metrics prometheus-adapter's rules serve, and the ScaledObject on the same two signals", () => {
    const hpa = one('base/hpa.yaml');
    expect(at(hpa, 'spec', 'scaleTargetRef')).to.deep.equal({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'tsserve' });
    const adapter = one('prometheus-adapter/config.yaml');
    expect(list(hpa, 'spec', 'metrics').map((m) => `${str(m, 'type')}:${str(m, 'pods', 'metric', 'name')}`))
      .to.deep.equal(list(adapter, 'rules').map((r) => `Pods:${str(r, 'name', 'as')}`));
    expect(list(adapter, 'rules').map((r) => at(r, 'resources', 'overrides'))).to.deep.equal(Array(2).fill({ namespace: { resource: 'namespace' }, pod: { resource: 'pod' } }));
    const keda = one('keda/scaledobject.yaml');
    expect(at(keda, 'spec', 'scaleTargetRef')).to.deep.equal({ name: 'tsserve' });
    // The autoscaler owns the replica count: a replicas field in the Deployment was applied again
    // by every `kubectl apply -k` and scaled a Deployment the HPA had grown back to 2.
    expect([at(one('base/deployment.yaml'), 'spec', 'replicas'), at(hpa, 'spec', 'minReplicas'), at(keda, 'spec', 'minReplicaCount')]).to.deep.equal([undefined, 2, 2]);
    expect(list(keda, 'spec', 'triggers').map((t) => [str(t, 'type'), str(t, 'metadata', 'threshold')])).to.deep.equal([['prometheus', '4'], ['prometheus', '8']]);
  });

  it('should have promtool accept every PromQL expression of the adapter rules (templates filled in as the adapter does) and of the ScaledObject', function () {
    if (!havePromtool()) {
      console.warn('SKIPPED: promtool not found — install the Debian package `prometheus` (apt-get install -y prometheus)');
      this.skip();
    }
    const exprs: Record<string, string> = {};
    list(one('prometheus-adapter/config.yaml'), 'rules').forEach((r, i) => {
      const seriesQuery = str(r, 'seriesQuery');
      const series = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(seriesQuery)?.[0] ?? '';
      exprs[`adapter:series${i}`] = seriesQuery;
      exprs[`adapter:rule${i}`] = str(r, 'metricsQuery').replaceAll('<<.Series>>', series)
        .replaceAll('<<.LabelMatchers>>', 'namespace="tsserve",pod=~"tsserve-.*"').replaceAll('<<.GroupBy>>', 'pod');
    });
    list(one('keda/scaledobject.yaml'), 'spec', 'triggers').forEach((t, i) => { exprs[`keda:trigger${i}`] = str(t, 'metadata', 'query'); });
    expect(Object.values(exprs).filter((e) => e === '' || e.includes('<<'))).to.deep.equal([]);
    const r = promtoolCheck(exprs);
    expect(r.code, r.out).to.equal(0);
    expect(r.out).to.contain(`SUCCESS: ${Object.keys(exprs).length} rules found`);
  });
});
