// deploy/compose/compose.yaml, docgen on one machine, checked without a Docker daemon.
// Always: its shape (real MongoDB as a replica set, NATS with JetStream, MinIO, the three
// roles from the image, health checks, named volumes) and that it sets only DOCGEN_*
// variables docgen reads, the required ones included; .env.example names every variable
// the file uses. When Debian's `docker-compose` (or DOCGEN_COMPOSE_BIN) exists — scripts/setup.sh
// installs it — `docker-compose config` must accept the file with the example filled in,
// and refuse it, naming the variable, while a secret is still empty.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CONFIG_VARIABLES } from '../../src/config/config.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const composeDir = path.join(repo, 'deploy/compose');
const composeFile = path.join(composeDir, 'compose.yaml');
const composeText = readFileSync(composeFile, 'utf8');
const exampleText = readFileSync(path.join(composeDir, '.env.example'), 'utf8');

type Service = {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  read_only?: boolean;
  shm_size?: string;
};
// The yaml package resolves the anchors and `<<` merge keys the way Compose does.
const compose = parseYaml(composeText, { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const roles = ['api', 'render', 'webhooks'] as const;

/** `KEY=value` lines of an env file. */
function envLines(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

/** The example with every empty value filled with a fresh secret. */
function filledExample(): string {
  return exampleText.replace(/^([A-Z0-9_]+)=$/gm, (_, name: string) => `${name}=${randomBytes(24).toString('hex')}`);
}

describe('deploy/compose/compose.yaml', () => {
  it('runs MongoDB as a replica set with auth, NATS with JetStream on disk, and MinIO, each with a health check and a named volume', () => {
    const { mongo, nats } = compose.services;
    expect(mongo!.command).toEqual(expect.arrayContaining(['--replSet', 'rs0', '--keyFile']));
    expect(mongo!.healthcheck!.test.join(' ')).toMatch(
      /rs\.initiate\(\{ _id: 'rs0', members: \[\{ _id: 0, host: 'mongo:27017' \}\] \}\)/,
    );
    expect(mongo!.healthcheck!.test.join(' ')).toContain('isWritablePrimary');
    expect(nats!.command).toEqual(expect.arrayContaining(['--jetstream', '--store_dir', '/data']));
    expect(nats!.image).toMatch(/nats:2\.(1\d|[2-9]\d)/);
    for (const [name, mount] of [
      ['mongo', 'mongo-data:/data/db'],
      ['nats', 'nats-data:/data'],
      ['minio', 'minio-data:/data'],
    ] as const) {
      expect(compose.services[name]!.volumes, name).toContain(mount);
      expect(compose.services[name]!.healthcheck, name).toBeDefined();
    }
    expect(Object.keys(compose.volumes).sort()).toEqual(['minio-data', 'mongo-data', 'mongo-keyfile', 'nats-data']);
    // Only the public API and MinIO's S3 API are published on every interface.
    const published = Object.entries(compose.services).flatMap(([name, s]) =>
      (s.ports ?? []).map((p) => `${name} ${p}`),
    );
    expect(published.filter((p) => !/ 127\.0\.0\.1:/.test(p))).toEqual([
      'minio ${MINIO_PUBLIC_PORT:-9000}:9000',
      'api ${DOCGEN_PUBLIC_PORT:-8080}:8080',
    ]);
  });

  it('runs each docgen role from the image, read-only, probed on /readyz, after its dependencies are ready', () => {
    for (const role of roles) {
      const s = compose.services[role]!;
      expect(s.image, role).toBe('${DOCGEN_IMAGE:-docgen:0.1.0}');
      expect(s.command, role).toEqual(['serve', '--role', role]);
      expect(s.read_only, role).toBe(true);
      expect(s.healthcheck!.test.join(' '), role).toContain('http://127.0.0.1:9090/readyz');
      expect(s.depends_on, role).toEqual({
        mongo: { condition: 'service_healthy' },
        nats: { condition: 'service_healthy' },
        'minio-init': { condition: 'service_completed_successfully' },
      });
    }
    expect(compose.services.render!.shm_size).toBe('1gb');
  });

  it('sets only variables docgen reads, every required one, and the admin token for the api role only', () => {
    const known = new Set(CONFIG_VARIABLES.map((v) => v.name));
    const required = CONFIG_VARIABLES.filter((v) => v.default === undefined && /Required/.test(v.description)).map(
      (v) => v.name,
    );
    for (const role of roles) {
      const env = compose.services[role]!.environment!;
      const names = Object.keys(env).filter((n) => n.startsWith('DOCGEN_'));
      expect(
        names.filter((n) => !known.has(n)),
        role,
      ).toEqual([]);
      for (const n of required) if (n !== 'DOCGEN_ADMIN_TOKEN') expect(names, `${role} ${n}`).toContain(n);
      expect('DOCGEN_ADMIN_TOKEN' in env, role).toBe(role === 'api');
      expect(env.DOCGEN_MONGODB_URL).toMatch(/^mongodb:\/\/.*@mongo:27017\/\?replicaSet=rs0&authSource=admin$/);
    }
  });

  it('.env.example names every variable the file uses, and leaves every secret empty', () => {
    const used = new Set([...composeText.matchAll(/\$\{([A-Z0-9_]+)[:}?-]/g)].map((m) => m[1]!));
    const example = envLines(exampleText);
    expect([...used].filter((n) => !example.has(n))).toEqual([]);
    expect([...example.keys()].filter((n) => !used.has(n))).toEqual([]);
    const mandatory = [...composeText.matchAll(/\$\{([A-Z0-9_]+):\?/g)].map((m) => m[1]!);
    expect(new Set(mandatory)).toEqual(
      new Set([
        'DOCGEN_SECRET_KEY',
        'DOCGEN_ADMIN_TOKEN',
        'MONGO_ROOT_PASSWORD',
        'MINIO_ROOT_PASSWORD',
        'DOCGEN_S3_SECRET_KEY',
      ]),
    );
    for (const n of mandatory) expect(example.get(n), n).toBe('');
  });
});

function findCompose(): string | undefined {
  for (const bin of [process.env.DOCGEN_COMPOSE_BIN, 'docker-compose'].filter((b): b is string => Boolean(b))) {
    const r = spawnSync(bin, ['version'], { encoding: 'utf8' });
    if (r.error === undefined && r.status === 0) return bin;
  }
  return undefined;
}
const composeBin = findCompose();
if (!composeBin)
  console.warn(
    'docker-compose not found (scripts/setup.sh installs it): `docker-compose config` was not run on deploy/compose/compose.yaml',
  );

describe.skipIf(!composeBin)('docker-compose config', () => {
  const run = (envFile: string) =>
    spawnSync(composeBin!, ['--env-file', envFile, '-f', composeFile, 'config'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
      cwd: composeDir,
    });

  it('accepts the file with the example filled in', () => {
    const envFile = path.join(uniqueRunDir('compose'), '.env');
    writeFileSync(envFile, filledExample());
    const r = run(envFile);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const resolved = parseYaml(r.stdout) as { services: Record<string, Service> };
    expect(Object.keys(resolved.services).sort()).toEqual([
      'api',
      'minio',
      'minio-init',
      'mongo',
      'mongo-keyfile',
      'nats',
      'render',
      'webhooks',
    ]);
    const password = envLines(readFileSync(envFile, 'utf8')).get('MONGO_ROOT_PASSWORD');
    expect(resolved.services.render!.environment!.DOCGEN_MONGODB_URL).toBe(
      `mongodb://docgen:${password}@mongo:27017/?replicaSet=rs0&authSource=admin`,
    );
  });

  it('refuses it while a secret is empty, naming the variable and how to make one', () => {
    const envFile = path.join(uniqueRunDir('compose'), '.env');
    writeFileSync(envFile, filledExample().replace(/^DOCGEN_S3_SECRET_KEY=.*$/m, 'DOCGEN_S3_SECRET_KEY='));
    const r = run(envFile);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('set DOCGEN_S3_SECRET_KEY in .env (openssl rand -hex 24)');
  });
});
