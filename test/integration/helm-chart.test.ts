// Checks of deploy/helm/docgen without a cluster. Always: values.yaml against
// values.schema.json, bad values rejected, every values path the templates use exists, the
// chart sets exactly docgen's DOCGEN_* variables with docgen's defaults. When a `helm`
// binary is available (PATH, or DOCGEN_HELM_BIN): the rendered manifests are checked, and
// validated against the Kubernetes schemas when the kubernetes-models package is installed.

import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { RENDER_CONSUMER } from '../../src/app/render-role.ts';
import { WEBHOOK_DISPATCHER_CONSUMER, WEBHOOK_SENDER_CONSUMER } from '../../src/app/webhooks-role.ts';
import { CONFIG_VARIABLES } from '../../src/config/config.ts';
import { METRIC_NAMES } from '../../src/ops/metrics.ts';
import { deliveriesStreamName, eventsStreamName } from '../../src/queue/messages.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const chartDir = path.join(repo, 'deploy/helm/docgen');
const ROLES = ['api', 'render', 'webhooks'] as const;
const known = new Set(CONFIG_VARIABLES.map((v) => v.name));

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const read = (p: string) => readFileSync(path.join(chartDir, p), 'utf8');
const values = parseYaml(read('values.yaml')) as JsonObject;
const schema = JSON.parse(read('values.schema.json')) as JsonObject;

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? listFiles(full) : [full];
  });
}
const templates = listFiles(path.join(chartDir, 'templates')).map((file) => ({
  file: path.relative(chartDir, file),
  text: readFileSync(file, 'utf8'),
}));

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Helm's merge of user values over defaults: maps merge, a null removes the key. */
function mergeValues(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const prev = out[k];
    if (v === null) delete out[k];
    else if (isObject(v) && isObject(prev)) out[k] = mergeValues(prev, v);
    else out[k] = v;
  }
  return out;
}

function lookup(root: Json, dotted: string): { found: boolean; value?: Json } {
  let cur: Json = root;
  for (const key of dotted.split('.').filter(Boolean)) {
    if (!isObject(cur) || !(key in cur)) return { found: false };
    cur = cur[key]!;
  }
  return { found: true, value: cur };
}

const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
const validate = ajv.compile(schema);
function errorsOf(v: JsonObject): string[] {
  return validate(v)
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

describe('values.schema.json', () => {
  it('accepts the chart defaults', () => {
    expect(errorsOf(values)).toEqual([]);
  });

  const ciFiles = readdirSync(path.join(chartDir, 'ci')).filter((f) => f.endsWith('.yaml'));
  it.each(ciFiles)('accepts ci/%s merged over the defaults', (file) => {
    const merged = mergeValues(values, parseYaml(read(`ci/${file}`)) as JsonObject);
    expect(errorsOf(merged)).toEqual([]);
  });

  const bad: [string, JsonObject, RegExp][] = [
    ['replicas as a word', { api: { replicaCount: 'two' } }, /\/api\/replicaCount must be integer/],
    ['an unknown top-level key', { replicas: 2 }, /must NOT have additional properties.*"replicas"/],
    ['an unknown nested key', { render: { concurency: 4 } }, /\/render must NOT have additional properties/],
    [
      'negative memory',
      { render: { resources: { limits: { memory: '-1Gi' } } } },
      /\/render\/resources\/limits\/memory/,
    ],
    [
      'a negative number as memory',
      { api: { resources: { requests: { memory: -5 } } } },
      /\/api\/resources\/requests\/memory/,
    ],
    [
      'a log level docgen does not know',
      { config: { logLevel: 'verbose' } },
      /\/config\/logLevel must be equal to one of the allowed values/,
    ],
    [
      'render concurrency out of range',
      { config: { render: { concurrency: 0 } } },
      /\/config\/render\/concurrency must be >= 1/,
    ],
    ['a short admin token', { secrets: { adminToken: 'short' } }, /\/secrets\/adminToken must match pattern/],
    ['a secret key that is not 32 bytes', { secrets: { secretKey: 'abc' } }, /\/secrets\/secretKey must match pattern/],
    [
      'a MongoDB URL of another scheme',
      { secrets: { mongodbUrl: 'postgres://x' } },
      /\/secrets\/mongodbUrl must match pattern/,
    ],
    [
      'a lower-case stream prefix',
      { config: { nats: { streamPrefix: 'docgen' } } },
      /\/config\/nats\/streamPrefix must match pattern/,
    ],
    [
      'an admin Service of type LoadBalancer',
      { service: { admin: { type: 'LoadBalancer' } } },
      /\/service\/admin must NOT have additional properties/,
    ],
    [
      'a public Service type that does not exist',
      { service: { public: { type: 'Public' } } },
      /\/service\/public\/type must be equal to one of the allowed values/,
    ],
    [
      'a DOCGEN_ variable through extraEnv',
      { api: { extraEnv: [{ name: 'DOCGEN_LOG_LEVEL', value: 'debug' }] } },
      /\/api\/extraEnv\/0\/name must NOT be valid/,
    ],
    [
      'HPA target above 100%',
      { render: { autoscaling: { targetCPUUtilizationPercentage: 150 } } },
      /targetCPUUtilizationPercentage must be <= 100/,
    ],
    ['a port out of range', { ports: { ops: 70000 } }, /\/ports\/ops must be <= 65535/],
    [
      'KEDA and the CPU HPA both on for render',
      { render: { keda: { enabled: true } } },
      /\/render\/autoscaling\/enabled must be equal to constant/,
    ],
    [
      'KEDA and the CPU HPA both on for webhooks',
      { webhooks: { autoscaling: { enabled: true }, keda: { enabled: true } } },
      /\/webhooks\/autoscaling\/enabled must be equal to constant/,
    ],
    [
      'KEDA scaling render to zero (its sweepers would stop)',
      { render: { autoscaling: { enabled: false }, keda: { enabled: true, minReplicaCount: 0 } } },
      /\/render\/keda\/minReplicaCount must be >= 1/,
    ],
    [
      'a KEDA lag threshold of 0',
      { webhooks: { keda: { lagThreshold: 0 } } },
      /\/webhooks\/keda\/lagThreshold must be >= 1/,
    ],
    [
      'a NATS monitoring endpoint with a scheme',
      { keda: { natsServerMonitoringEndpoint: 'http://nats:8222' } },
      /\/keda\/natsServerMonitoringEndpoint must match pattern/,
    ],
    [
      'a Prometheus address without a scheme',
      { keda: { prometheus: { serverAddress: 'prometheus:9090' } } },
      /\/keda\/prometheus\/serverAddress must match pattern/,
    ],
    [
      'KEDA for the api role (it consumes no queue)',
      { api: { keda: { enabled: true } } },
      /\/api must NOT have additional properties/,
    ],
  ];
  it('accepts KEDA for render and webhooks once their CPU HPAs are off', () => {
    expect(
      errorsOf(
        mergeValues(values, {
          render: { autoscaling: { enabled: false }, keda: { enabled: true } },
          webhooks: { keda: { enabled: true } },
        }),
      ),
    ).toEqual([]);
  });

  it.each(bad)('rejects %s', (_name, override, message) => {
    const errors = errorsOf(mergeValues(values, override));
    expect(errors.join('\n')).toMatch(message);
  });
});

describe('templates', () => {
  // Aliases the templates bind: `$c := .Values.config` and the role section
  // `$values := index $root.Values $role` (also passed to helpers as `.values`).
  function valuePaths(text: string): { path: string; perRole: boolean; raw: string }[] {
    const aliases = new Map<string, string>();
    for (const m of text.matchAll(/\$(\w+)\s*:=\s*(?:\$root|\$|\.root)?\.Values((?:\.\w+)*)\s*\}\}/g)) {
      aliases.set(m[1]!, m[2]!.slice(1));
    }
    const roleAliases = new Set<string>();
    for (const m of text.matchAll(/\$(\w+)\s*:=\s*index\s+(?:\$root|\$|\.root)\.Values\s+\$role\b/g))
      roleAliases.add(m[1]!);
    const out: { path: string; perRole: boolean; raw: string }[] = [];
    for (const m of text.matchAll(/(?:\$root|\$|\.root)?\.Values((?:\.\w+)+)/g)) {
      out.push({ path: m[1]!.slice(1), perRole: false, raw: m[0] });
    }
    for (const m of text.matchAll(/(\$\w+|(?<![\w$])\.values)((?:\.\w+)+)/g)) {
      const name = m[1]!;
      const rest = m[2]!.slice(1);
      if (name === '.values' || roleAliases.has(name.slice(1))) out.push({ path: rest, perRole: true, raw: m[0] });
      else if (aliases.has(name.slice(1)))
        out.push({ path: `${aliases.get(name.slice(1))}.${rest}`, perRole: false, raw: m[0] });
    }
    return out;
  }

  it('every .Values path the templates read exists in values.yaml (role sections: in all three)', () => {
    const missing: string[] = [];
    let checked = 0;
    for (const { file, text } of templates) {
      for (const ref of valuePaths(text)) {
        checked++;
        const paths = ref.perRole ? ROLES.map((r) => `${r}.${ref.path}`) : [ref.path];
        for (const p of paths) if (!lookup(values, p).found) missing.push(`${file}: ${ref.raw} -> ${p}`);
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('has the resources of a docgen install', () => {
    const files = templates.map((t) => t.file).sort();
    for (const f of [
      'templates/NOTES.txt',
      'templates/_helpers.tpl',
      'templates/configmap.yaml',
      'templates/secret.yaml',
      'templates/deployment-api.yaml',
      'templates/deployment-render.yaml',
      'templates/deployment-webhooks.yaml',
      'templates/service-public.yaml',
      'templates/service-admin.yaml',
      'templates/hpa.yaml',
      'templates/pdb.yaml',
      'templates/networkpolicy.yaml',
    ]) {
      expect(files).toContain(f);
    }
    const chart = parseYaml(read('Chart.yaml')) as JsonObject;
    expect(chart).toMatchObject({ apiVersion: 'v2', name: 'docgen', type: 'application' });
    const pkg = JSON.parse(readFileSync(path.join(repo, 'package.json'), 'utf8')) as { version: string };
    expect(chart.appVersion).toBe(pkg.version);
  });

  // The DOCGEN_* names the chart sets: ConfigMap keys and container env names.
  const configMap = templates.find((t) => t.file === 'templates/configmap.yaml')!.text;
  const deployment = templates.find((t) => t.file === 'templates/_deployment.tpl')!.text;
  const configMapVars = [...configMap.matchAll(/^\s+(DOCGEN_\w+):/gm)].map((m) => m[1]!);
  const envVars = [...deployment.matchAll(/-\s+name:\s+(DOCGEN_\w+)/g)].map((m) => m[1]!);
  const chartVars = new Set([...configMapVars, ...envVars]);

  it('sets only variables docgen reads, each once', () => {
    expect([...chartVars].filter((v) => !known.has(v))).toEqual([]);
    expect(configMapVars.length + envVars.length).toBe(chartVars.size);
    // Secrets never go through the ConfigMap.
    for (const secret of [
      'DOCGEN_ADMIN_TOKEN',
      'DOCGEN_SECRET_KEY',
      'DOCGEN_MONGODB_URL',
      'DOCGEN_S3_ACCESS_KEY',
      'DOCGEN_S3_SECRET_KEY',
    ]) {
      expect(configMapVars).not.toContain(secret);
      expect(envVars).toContain(secret);
    }
  });

  it('sets every variable docgen reads (DOCGEN_ROLES through `serve --role`), required ones included', () => {
    const expected = CONFIG_VARIABLES.map((v) => v.name).filter((n) => n !== 'DOCGEN_ROLES');
    expect(expected.filter((n) => !chartVars.has(n))).toEqual([]);
    const required = CONFIG_VARIABLES.filter((v) => v.default === undefined && /Required/.test(v.description)).map(
      (v) => v.name,
    );
    expect(required.length).toBeGreaterThanOrEqual(7);
    for (const n of required) expect(chartVars.has(n), n).toBe(true);
    expect(deployment).toMatch(/args: \["serve", "--role", \{\{ \$role \| quote \}\}\]/);
  });

  it('values.yaml defaults are docgen defaults', () => {
    const defaults = new Map(CONFIG_VARIABLES.map((v) => [v.name, v.default]));
    const required = new Set(CONFIG_VARIABLES.filter((v) => /Required/.test(v.description)).map((v) => v.name));
    let compared = 0;
    for (const m of configMap.matchAll(/^\s+(DOCGEN_\w+):.*?\$c\.([\w.]+)/gm)) {
      const { found, value } = lookup(values, `config.${m[2]}`);
      expect(found, m[2]).toBe(true);
      const expected = defaults.get(m[1]!);
      // docgen has no default for a required URL; the chart's is the in-cluster name.
      if (expected === undefined && required.has(m[1]!)) expect(String(value), m[1]).toMatch(/^[a-z]+:\/\/\S+$/);
      else if (expected === undefined) expect(value, m[1]).toBe('');
      else expect(String(value), m[1]).toBe(expected);
      compared++;
    }
    expect(compared).toBeGreaterThan(20);
    const ports = values.ports as JsonObject;
    expect(`${values.listenHost}:${ports.public}`).toBe(defaults.get('DOCGEN_PUBLIC_ADDR'));
    expect(`${values.listenHost}:${ports.admin}`).toBe(defaults.get('DOCGEN_ADMIN_ADDR'));
    expect(`${values.listenHost}:${ports.ops}`).toBe(defaults.get('DOCGEN_OPS_ADDR'));
  });

  it('each role has a Deployment, and the role-specific parts stay where they belong', () => {
    for (const role of ROLES) {
      expect(read(`templates/deployment-${role}.yaml`)).toContain(`"role" "${role}"`);
    }
    // Admin token only for api; /dev/shm only for render; admin Service always ClusterIP.
    expect(deployment).toMatch(
      /if eq \$role "api" \}\}\s*\n\s*# Only the api role[^\n]*\n\s*- name: DOCGEN_ADMIN_TOKEN/,
    );
    expect(deployment).toMatch(/medium: Memory/);
    expect(read('templates/service-admin.yaml')).toMatch(/type: ClusterIP/);
    expect(read('templates/service-admin.yaml')).not.toMatch(/\.Values\.service\.admin\.type/);
  });
});

// ---------------------------------------------------------------------------------------
// Rendered manifests: only where a chart renderer exists.
// ---------------------------------------------------------------------------------------

function findHelm(): string | undefined {
  const candidates = [process.env.DOCGEN_HELM_BIN, 'helm'].filter((c): c is string => Boolean(c));
  for (const bin of candidates) {
    const r = spawnSync(bin, ['version', '--short'], { encoding: 'utf8' });
    if (r.error === undefined && (r.status === 0 || bin === process.env.DOCGEN_HELM_BIN)) return bin;
  }
  return undefined;
}
const helm = findHelm();

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, any>;
  data?: Record<string, string>;
}

function helmTemplate(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(helm!, ['template', 'docgen', chartDir, '--namespace', 'docgen', ...args], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function render(valuesFile: string): K8sObject[] {
  const r = helmTemplate(['-f', path.join(chartDir, 'ci', valuesFile)]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null);
}

async function loadModel(
  apiVersion: string,
  kind: string,
): Promise<(new (o: unknown) => { validate(): void }) | undefined> {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  // A variable specifier: kubernetes-models is optional (not every machine installs it).
  const specifier = `kubernetes-models/${group ? `${group}/` : ''}${version}/${kind}`;
  try {
    const mod = (await import(specifier)) as Record<string, unknown>;
    return mod[kind] as new (o: unknown) => { validate(): void };
  } catch {
    return undefined;
  }
}

describe.skipIf(!helm)('rendered chart (helm template)', () => {
  it('fails with a clear message when secrets are missing', () => {
    const r = helmTemplate([]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/secrets\.adminToken is required/);
  });

  it('fails when terminationGracePeriodSeconds does not cover the shutdown grace', () => {
    const r = helmTemplate([
      '-f',
      path.join(chartDir, 'ci/default-values.yaml'),
      '--set',
      'render.terminationGracePeriodSeconds=10',
    ]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/terminationGracePeriodSeconds 10 is too short/);
  });

  for (const file of ['default-values.yaml', 'full-values.yaml']) {
    describe(file, () => {
      // Rendered in beforeAll: describe bodies run even when the suite is skipped.
      let objects: K8sObject[] = [];
      let deployments: K8sObject[] = [];
      const merged = mergeValues(values, parseYaml(read(`ci/${file}`)) as JsonObject);
      const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
      beforeAll(() => {
        objects = render(file);
        deployments = byKind('Deployment');
      });

      it('renders one Deployment per role, with standard labels', () => {
        expect(deployments.map((d) => d.metadata.labels?.['app.kubernetes.io/component']).sort()).toEqual([
          'api',
          'render',
          'webhooks',
        ]);
        for (const o of objects) {
          expect(o.metadata.labels?.['app.kubernetes.io/name'], `${o.kind}/${o.metadata.name}`).toBe('docgen');
          expect(o.metadata.labels?.['app.kubernetes.io/instance']).toBe('docgen');
          expect(o.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');
        }
      });

      it('hardens every pod and probes the ops port', () => {
        const graceSeconds = Number((merged.config as JsonObject).shutdownGraceMs) / 1000;
        for (const d of deployments) {
          const pod = d.spec!.template.spec;
          // Render pods: the profile that lets Chromium keep its sandbox (deploy/seccomp/).
          const seccompProfile = d.metadata.name.endsWith('-render')
            ? { type: 'Localhost', localhostProfile: 'profiles/docgen-chromium.json' }
            : { type: 'RuntimeDefault' };
          expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile });
          expect(pod.automountServiceAccountToken).toBe(false);
          expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(graceSeconds);
          const [c] = pod.containers;
          expect(c.securityContext).toMatchObject({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          });
          expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'ops' });
          expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'ops' });
          expect(c.ports.find((p: { name: string }) => p.name === 'ops').containerPort).toBe(9090);
          expect(c.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toContain('/tmp');
          expect(d.spec!.template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
        }
        const render = deployments.find((d) => d.metadata.name.endsWith('-render'))!;
        const shm = render.spec!.template.spec.volumes.find((v: { name: string }) => v.name === 'dshm');
        expect(shm.emptyDir.medium).toBe('Memory');
      });

      it('sets DOCGEN_* from the ConfigMap and Secret, the admin token for api only', () => {
        const cm = byKind('ConfigMap')[0]!;
        for (const d of deployments) {
          const role = d.metadata.labels!['app.kubernetes.io/component'];
          const c = d.spec!.template.spec.containers[0];
          const names = new Set<string>([...Object.keys(cm.data!), ...c.env.map((e: { name: string }) => e.name)]);
          const docgenNames = [...names].filter((n) => n.startsWith('DOCGEN_'));
          for (const n of docgenNames) expect(known.has(n), n).toBe(true);
          expect(names.has('DOCGEN_ADMIN_TOKEN')).toBe(role === 'api');
          for (const n of [
            'DOCGEN_SECRET_KEY',
            'DOCGEN_MONGODB_URL',
            'DOCGEN_NATS_URL',
            'DOCGEN_S3_ENDPOINT',
            'DOCGEN_S3_ACCESS_KEY',
            'DOCGEN_S3_SECRET_KEY',
          ]) {
            expect(names.has(n), `${role} ${n}`).toBe(true);
          }
          expect(c.args).toEqual(['serve', '--role', role]);
        }
      });

      it('the admin Service is ClusterIP; HPAs and PDBs target the right Deployments', () => {
        const admin = byKind('Service').find((s) => s.metadata.name.endsWith('-admin'))!;
        expect(admin.spec!.type).toBe('ClusterIP');
        for (const hpa of byKind('HorizontalPodAutoscaler')) {
          expect(hpa.apiVersion).toBe('autoscaling/v2');
          expect(deployments.map((d) => d.metadata.name)).toContain(hpa.spec!.scaleTargetRef.name);
          const target = deployments.find((d) => d.metadata.name === hpa.spec!.scaleTargetRef.name)!;
          expect(target.spec!.replicas).toBeUndefined();
        }
        for (const pdb of byKind('PodDisruptionBudget')) expect(pdb.apiVersion).toBe('policy/v1');
      });

      it('render pods accept only the ops port and reach only DNS, MongoDB, NATS and object storage', () => {
        const np = byKind('NetworkPolicy').find((p) => p.metadata.name.endsWith('-render'))!;
        expect(np.spec!.policyTypes).toEqual(['Ingress', 'Egress']);
        expect(np.spec!.ingress.flatMap((r: { ports: { port: number }[] }) => r.ports.map((p) => p.port))).toEqual([
          9090,
        ]);
        const egressPorts = np.spec!.egress.flatMap((r: { ports: { port: number }[] }) => r.ports.map((p) => p.port));
        const policy = merged.networkPolicy as JsonObject;
        const deps = policy.egress as Record<string, { ports: number[] }>;
        expect(new Set(egressPorts)).toEqual(
          new Set([53, ...deps.mongodb!.ports, ...deps.nats!.ports, ...deps.objectStorage!.ports]),
        );
        for (const rule of np.spec!.egress) expect(rule.ports.length).toBeGreaterThan(0);
      });

      it('passes Kubernetes schema validation (when kubernetes-models is installed)', async () => {
        let validated = 0;
        for (const o of objects) {
          const Model = await loadModel(o.apiVersion, o.kind);
          if (!Model) continue;
          expect(() => new Model(o).validate(), `${o.kind}/${o.metadata.name}`).not.toThrow();
          validated++;
        }
        if (validated === 0)
          console.warn('kubernetes-models is not installed: rendered manifests were not schema-validated');
      });
    });
  }
});

describe.skipIf(!helm)('rendered chart with KEDA (helm template -f ci/keda-values.yaml)', () => {
  let objects: K8sObject[] = [];
  const kedaValues = parseYaml(read('ci/keda-values.yaml')) as {
    config: { nats: { streamPrefix: string } };
    keda: { natsServerMonitoringEndpoint: string; prometheus: { serverAddress: string } };
  };
  const prefix = kedaValues.config.nats.streamPrefix;
  beforeAll(() => {
    objects = render('keda-values.yaml');
  });
  const scaledObject = (role: string) =>
    objects.find((o) => o.kind === 'ScaledObject' && o.metadata.labels?.['app.kubernetes.io/component'] === role);

  it("scales render on the render jobs its pods export (prometheus, and CPU), webhooks on both of its consumers, with docgen's own stream and consumer names", () => {
    const render = scaledObject('render')!;
    expect(render.apiVersion).toBe('keda.sh/v1alpha1');
    expect(render.spec!.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'docgen-render' });
    expect(render.spec).toMatchObject({ minReplicaCount: 2, maxReplicaCount: 12 });
    expect(render.spec!.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds).toBe(300);
    // The lanes are one consumer per workspace: no nats-jetstream trigger on a consumer that no
    // longer holds the backlog (the pre-lanes render-workers) is left.
    expect(render.spec!.triggers).toEqual([
      {
        type: 'prometheus',
        metadata: {
          serverAddress: kedaValues.keda.prometheus.serverAddress,
          query: 'max(docgen_render_queue_depth{namespace="docgen",role="render"}) or vector(0)',
          threshold: '8',
          activationThreshold: '0',
        },
      },
      { type: 'cpu', metricType: 'Utilization', metadata: { value: '60' } },
    ]);
    expect(JSON.stringify(render.spec!.triggers)).not.toContain(RENDER_CONSUMER);
    // The query names a metric the render role exports (src/ops/metrics.ts).
    expect(METRIC_NAMES).toContain('docgen_render_queue_depth');
    const webhooks = scaledObject('webhooks')!;
    expect(webhooks.spec!.scaleTargetRef.name).toBe('docgen-webhooks');
    expect(
      webhooks.spec!.triggers.map((t: { type: string; metadata: Record<string, string> }) => [
        t.type,
        t.metadata.stream,
        t.metadata.consumer,
        t.metadata.lagThreshold,
      ]),
    ).toEqual([
      ['nats-jetstream', eventsStreamName(prefix), WEBHOOK_DISPATCHER_CONSUMER, '200'],
      ['nats-jetstream', deliveriesStreamName(prefix), WEBHOOK_SENDER_CONSUMER, '200'],
    ]);
    expect(scaledObject('api')).toBeUndefined();
  });

  it('leaves the replica count to KEDA and creates no CPU HPA for the roles it scales', () => {
    const hpaTargets = objects
      .filter((o) => o.kind === 'HorizontalPodAutoscaler')
      .map((o) => o.spec!.scaleTargetRef.name);
    expect(hpaTargets).toEqual(['docgen-api']);
    for (const d of objects.filter((o) => o.kind === 'Deployment')) {
      expect(d.spec!.replicas, d.metadata.name).toBeUndefined();
    }
  });

  it('renders no ScaledObject by default, and refuses KEDA and the CPU HPA together', () => {
    expect(render('default-values.yaml').filter((o) => o.kind === 'ScaledObject')).toEqual([]);
    const both = helmTemplate([
      '-f',
      path.join(chartDir, 'ci/keda-values.yaml'),
      '--set',
      'render.autoscaling.enabled=true',
    ]);
    expect(both.status).not.toBe(0);
    // Helm words schema errors as render/autoscaling/enabled or render.autoscaling.enabled by version.
    expect(both.stderr).toMatch(/render[./]autoscaling[./]enabled/);
  });

  it("takes an operator's own PromQL query for render", () => {
    const r = helmTemplate([
      '-f',
      path.join(chartDir, 'ci/keda-values.yaml'),
      '--set-string',
      'render.keda.query=max(docgen_render_queue_depth{cluster="eu-1"})',
    ]);
    expect(r.stderr).toBe('');
    const custom = parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as K8sObject | null)
      .find((o) => o?.kind === 'ScaledObject' && o.metadata.labels?.['app.kubernetes.io/component'] === 'render')!;
    expect(custom.spec!.triggers[0].metadata.query).toBe('max(docgen_render_queue_depth{cluster="eu-1"})');
  });
});
