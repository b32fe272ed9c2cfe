// .github/workflows/ci.yml cannot run here (it needs Docker, GitHub's runners and a kind
// cluster), so this keeps it in step with the code it drives: the DOCGEN_TEST_* switches it
// sets are the ones the harness reads and all reach the test container; MongoDB 7 and 8 run
// as replica sets; NATS is 2.10+ with JetStream; the chart job lints every ci/ values file,
// installs with --wait and runs helm test; every --set path exists in values.yaml; the
// Compose job fills exactly the secrets compose.yaml requires.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { FINISHING_CASES } from '../../bench/lib/finishing-cases.ts';
import { CONFORMANCE_LEVELS } from '../../src/render/finishing/document-settings.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (p: string) => readFileSync(path.join(repo, p), 'utf8');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
}
interface Job {
  'runs-on': string;
  env?: Record<string, string>;
  strategy?: { matrix: Record<string, string[]> };
  steps: Step[];
}
const workflow = parseYaml(read('.github/workflows/ci.yml')) as {
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
};
const runs = (job: Job) => job.steps.map((s) => s.run ?? '').join('\n');

describe('.github/workflows/ci.yml', () => {
  it('runs on pushes to main and on pull requests, with four jobs', () => {
    expect(Object.keys(workflow.on)).toEqual(expect.arrayContaining(['push', 'pull_request']));
    expect(Object.keys(workflow.jobs).sort()).toEqual(['chart', 'compose', 'test', 'verapdf']);
  });

  it('has veraPDF validate a sample of every conformance level against the flavour it claims', () => {
    const script = runs(workflow.jobs.verapdf!);
    expect(script).toContain('debian:bookworm');
    expect(script).toMatch(
      /bash scripts\/setup\.sh\s+node_modules\/\.bin\/node scripts\/conformance-samples\.ts verapdf-samples/,
    );
    expect(script).toContain('brew install verapdf');
    expect(script).toContain('done < verapdf-samples/manifest.tsv');
    expect(script).toMatch(/verapdf --flavour "\$flavour" --format mrr "verapdf-samples\/\$file"/);
    expect(script).toContain('isCompliant="true"');
    expect(script).toContain('exit "$failed"');
    // Every level docgen offers has a sample, under the flavour veraPDF calls it.
    const flavours = new Set(FINISHING_CASES.flatMap((c) => c.flavours ?? []));
    const veraPdfName = (level: string) => level.replace('PDF/A-', '').replace('PDF/UA-', 'ua').toLowerCase();
    for (const level of CONFORMANCE_LEVELS) expect(flavours, level).toContain(veraPdfName(level));
  });

  it('runs the suite against MongoDB 7 and 8 replica sets, NATS 2.10+ and MinIO, through every switch the harness reads', () => {
    const job = workflow.jobs.test!;
    expect(job.strategy!.matrix.mongodb).toEqual(['7.0', '8.0']);
    const script = runs(job);
    expect(script).toMatch(/mongo:\$\{\{ matrix\.mongodb \}\} --replSet rs0/);
    // The TTL checks of test/integration/mongodb-only.test.ts need the monitor to run every second.
    expect(script).toContain('--setParameter ttlMonitorSleepSecs=1');
    expect(script).toContain("rs.initiate({ _id: 'rs0'");
    expect(script).toMatch(/nats:2\.(1\d|[2-9]\d)[-\w.]* nats-server --jetstream/);
    expect(script).toMatch(/minio\/minio:\S+ server \/data/);
    expect(job.env!.DOCGEN_TEST_MONGODB_URL).toMatch(/replicaSet=rs0/);

    const harness = read('test/harness/dependencies.ts');
    const read_by_harness = new Set(
      [...harness.matchAll(/(?:testSwitch\(|process\.env\.)'?(DOCGEN_TEST_[A-Z0-9_]+)/g)].map((m) => m[1]!),
    );
    for (const name of [
      'DOCGEN_TEST_MONGODB_URL',
      'DOCGEN_TEST_NATS_URL',
      'DOCGEN_TEST_S3_ENDPOINT',
      'DOCGEN_TEST_S3_ACCESS_KEY',
      'DOCGEN_TEST_S3_SECRET_KEY',
      'DOCGEN_TEST_S3_REGION',
    ]) {
      expect(read_by_harness, name).toContain(name);
      expect(job.env, name).toHaveProperty(name);
      // The suite runs in a Debian container: each switch must be passed into it.
      expect(script, name).toContain(`-e ${name}`);
    }
    expect(script).toContain('debian:bookworm');
    expect(script).toContain('bash .ci/run');
  });

  it('lints the chart with every ci/ values file, installs it on kind with --wait, and runs helm test', () => {
    const job = workflow.jobs.chart!;
    expect(job.steps.map((s) => s.uses?.split('@')[0]).filter(Boolean)).toEqual(
      expect.arrayContaining(['actions/checkout', 'azure/setup-helm', 'helm/kind-action']),
    );
    const script = runs(job);
    expect(script).toContain('docker build -f deploy/Dockerfile -t docgen:ci .');
    expect(script).toMatch(
      /for f in deploy\/helm\/docgen\/ci\/\*-values\.yaml; do\s+helm lint deploy\/helm\/docgen --strict -f "\$f"/,
    );
    expect(script).toContain('kind load docker-image docgen:ci --name docgen');
    expect(script).toMatch(/helm install docgen deploy\/helm\/docgen --namespace docgen --wait/);
    expect(script).toContain('helm test docgen --namespace docgen');

    const values = parseYaml(read('deploy/helm/docgen/values.yaml')) as Record<string, unknown>;
    const sets = [...script.matchAll(/--set ([\w.]+)=/g)].map((m) => m[1]!);
    expect(sets.length).toBeGreaterThan(8);
    for (const key of sets) {
      let cur: unknown = values;
      for (const part of key.split('.')) cur = (cur as Record<string, unknown> | undefined)?.[part];
      expect(cur, `--set ${key} names no value in values.yaml`).not.toBeUndefined();
    }
  });

  it('starts the one-machine Compose setup with exactly the secrets compose.yaml requires', () => {
    const script = runs(workflow.jobs.compose!);
    const filled = /for name in ([A-Z0-9_ ]+); do/.exec(script)![1]!.trim().split(/\s+/).sort();
    const required = [
      ...new Set([...read('deploy/compose/compose.yaml').matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]!)),
    ].sort();
    expect(filled).toEqual(required);
    expect(script).toContain('docker compose -f deploy/compose/compose.yaml up -d --wait');
  });
});
