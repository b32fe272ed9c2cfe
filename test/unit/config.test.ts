import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config/config.ts';

const valid = {
  DOCGEN_ADMIN_TOKEN: 'an-admin-token-long-enough',
  DOCGEN_SECRET_KEY: '11'.repeat(32),
  DOCGEN_MONGODB_URL: 'mongodb://127.0.0.1:27017',
  DOCGEN_NATS_URL: 'nats://127.0.0.1:4222',
  DOCGEN_S3_ENDPOINT: 'http://127.0.0.1:9000',
  DOCGEN_S3_ACCESS_KEY: 'access',
  DOCGEN_S3_SECRET_KEY: 'secret',
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
}

describe('configuration', () => {
  it('loads a valid environment with documented defaults', () => {
    const config = loadConfig(valid);
    expect(config.roles).toEqual(['api', 'render', 'webhooks']);
    expect(config.publicAddress).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.secretKey).toHaveLength(32);
    expect(config.s3.publicEndpoint.href).toBe('http://127.0.0.1:9000/');
    expect(config.api).toMatchObject({ rateLimitPerSecond: 20, rateLimitBurst: 40, maxBodyBytes: 1048576 });
    expect(config.webhooks.allowInsecureUrls).toBe(false);
  });

  it('names every bad variable and how to fix it, all at once', () => {
    const problems = problemsOf({
      ...valid,
      DOCGEN_RENDER_CONCURRENCY: 'lots',
      DOCGEN_SECRET_KEY: 'short',
      DOCGEN_PUBLIC_ADDR: 'nowhere',
    });
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(
      /DOCGEN_RENDER_CONCURRENCY="lots" is not valid\. Set it to a whole number from 1 to 64/,
    );
    expect(problems.join('\n')).toMatch(/DOCGEN_SECRET_KEY must be 32 bytes.*openssl rand -hex 32/);
    expect(problems.join('\n')).toMatch(/DOCGEN_PUBLIC_ADDR="nowhere" is not valid\. Set it to HOST:PORT/);
  });

  it('requires the admin token only where the api role runs', () => {
    const { DOCGEN_ADMIN_TOKEN: _, ...withoutToken } = valid;
    expect(problemsOf(withoutToken).join('\n')).toMatch(/DOCGEN_ADMIN_TOKEN is not set/);
    expect(problemsOf({ ...withoutToken, DOCGEN_ROLES: 'render,webhooks' })).toEqual([]);
  });

  it('rejects unknown roles and missing infrastructure', () => {
    const problems = problemsOf({ DOCGEN_ROLES: 'api,printer' });
    expect(problems.join('\n')).toMatch(/DOCGEN_ROLES="api,printer" is not valid/);
    expect(problems.join('\n')).toMatch(/DOCGEN_MONGODB_URL is not set/);
    expect(problems.join('\n')).toMatch(/DOCGEN_NATS_URL is not set/);
    expect(problems.join('\n')).toMatch(/DOCGEN_S3_ENDPOINT is not set/);
  });

  it('README documents exactly the variables docgen reads', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/^\| `(DOCGEN_[A-Z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(documented).toEqual(CONFIG_VARIABLES.map((v) => v.name));
  });

  it('README marks as required exactly the variables without a default that say Required', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const markedRequired = [...readme.matchAll(/^\| `(DOCGEN_[A-Z0-9_]+)` \| \(required\) \|/gm)].map((m) => m[1]);
    expect(markedRequired).toEqual(
      CONFIG_VARIABLES.filter((v) => v.default === undefined && /Required/.test(v.description)).map((v) => v.name),
    );
  });
});
