import { describe, expect, it } from 'vitest';
import { createLogger, isSecretFieldName, redact, redactString } from '../../src/ops/logger.ts';
import type { LogLevel } from '../../src/ops/logger.ts';

const API_KEY = 'svc_live_' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY';
const WHSEC = 'whsec_' + 'Zm9vYmFyYmF6cXV4cXV1eA_-x';
const ADMIN_TOKEN = 'adm1n-t0ken-0123456789abcdef';

function capture(level: LogLevel = 'debug', role = 'api') {
  const lines: string[] = [];
  const logger = createLogger({
    level,
    role,
    stream: { write: (chunk: string) => lines.push(chunk) },
    now: () => new Date('2026-11-21T08:00:00.123Z'),
  });
  const records = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { logger, lines, records };
}

describe('logger', () => {
  it('writes one JSON line per record with time, level, msg, role and fields', () => {
    const { logger, lines, records } = capture();
    logger.info('generation created', { requestId: 'req_1', generationId: 'gen_1', n: 2 });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(lines[0]!.trimEnd()).not.toContain('\n');
    expect(records()[0]).toEqual({
      time: '2026-11-21T08:00:00.123Z',
      level: 'info',
      msg: 'generation created',
      role: 'api',
      requestId: 'req_1',
      generationId: 'gen_1',
      n: 2,
    });
  });

  it('drops records below the configured level', () => {
    const { logger, records } = capture('warn');
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(records().map((r) => r.level)).toEqual(['warn', 'error']);
    expect(logger.isLevelEnabled('info')).toBe(false);
    expect(logger.isLevelEnabled('error')).toBe(true);
  });

  it('child loggers bind fields, and call fields win over bound ones', () => {
    const { logger, records } = capture();
    const child = logger.child({ requestId: 'req_a' }).child({ generationId: 'gen_b' });
    child.info('rendering', { attempt: 1 });
    child.info('override', { requestId: 'req_c' });
    logger.info('parent untouched');
    const [a, b, c] = records();
    expect(a).toMatchObject({ requestId: 'req_a', generationId: 'gen_b', attempt: 1, role: 'api' });
    expect(b).toMatchObject({ requestId: 'req_c' });
    expect(c).not.toHaveProperty('requestId');
  });

  it('a field bound by a child and given again appears once in the line', () => {
    const { logger, lines } = capture();
    logger.child({ requestId: 'req_a' }).info('x', { requestId: 'req_b' });
    expect(lines[0]!.match(/"requestId"/g)).toHaveLength(1);
    expect(lines[0]).toContain('"requestId":"req_b"');
  });

  it('fields cannot overwrite the envelope', () => {
    const { logger, records } = capture();
    logger.info('real', { msg: 'fake', level: 'debug', time: 'x' });
    const [r] = records();
    expect(r).toMatchObject({ msg: 'real', level: 'info', field_msg: 'fake', field_level: 'debug' });
  });

  it('serializes errors with name, message, stack, code and cause', () => {
    const { logger, records } = capture();
    const err = Object.assign(new Error('boom', { cause: new Error('root') }), { code: 'E_BOOM' });
    logger.error('failed', { err });
    const r = records()[0]!;
    expect(r.err).toMatchObject({ name: 'Error', message: 'boom', code: 'E_BOOM', cause: { message: 'root' } });
    expect(String((r.err as { stack: string }).stack)).toContain('boom');
  });

  it('survives circular structures, bigint and deep nesting', () => {
    const { logger, records } = capture();
    const a: Record<string, unknown> = { name: 'a', big: 10n };
    a.self = a;
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 20; i++) deep = { deep };
    logger.info('odd', { a, deep });
    const r = records()[0]!;
    expect(r.a).toEqual({ name: 'a', big: '10', self: '[Circular]' });
    expect(JSON.stringify(r.deep)).toContain('[Truncated]');
  });

  it('a throwing stream does not throw into the caller', () => {
    const logger = createLogger({
      stream: {
        write: () => {
          throw new Error('EPIPE');
        },
      },
    });
    expect(() => logger.error('x')).not.toThrow();
  });
});

describe('redaction', () => {
  it('masks API keys, webhook secrets and bearer tokens inside any string', () => {
    const text = `key ${API_KEY} secret ${WHSEC} header Authorization: Bearer ${ADMIN_TOKEN}`;
    const out = redactString(text);
    expect(out).not.toContain(API_KEY);
    expect(out).not.toContain(WHSEC);
    expect(out).not.toContain(ADMIN_TOKEN);
    expect(out).toContain('svc_live_[REDACTED]');
    expect(out).toContain('whsec_[REDACTED]');
    expect(out).toContain('Bearer [REDACTED]');
  });

  it('masks passwords in connection strings and pre-signed URL signatures', () => {
    const out = redactString(
      'mongodb://docgen:hunter2hunter2@mongo-0:27017/?replicaSet=rs0 and http://minio:9000/docgen/a.pdf?X-Amz-Credential=AKIA%2F20261121&X-Amz-Signature=deadbeefcafe',
    );
    expect(out).not.toContain('hunter2');
    expect(out).not.toContain('deadbeefcafe');
    expect(out).not.toContain('AKIA');
    expect(out).toContain('mongodb://docgen:[REDACTED]@mongo-0:27017');
  });

  it('masks secret-named fields at any depth, in arrays and maps', () => {
    const value = {
      secret: 'plain',
      token: 'plain',
      password: 'plain',
      authorization: 'Basic Zm9vOmJhcg==',
      apiKey: 'plain',
      key: 'plain',
      nested: {
        headers: { 'x-api-key': 'plain', Authorization: 'plain', cookie: 'plain', 'content-type': 'application/json' },
        list: [{ adminToken: 'plain' }, { secretKey: Buffer.from('x') }, { webhook_secret: 'plain' }],
        map: new Map([['accessKey', 'plain']]),
      },
      keyId: 'key_123',
      generationId: 'gen_1',
    };
    const out = redact(value);
    const json = JSON.stringify(out);
    expect(json).not.toContain('plain');
    expect(json).not.toContain('Zm9vOmJhcg');
    expect(out).toMatchObject({
      keyId: 'key_123',
      generationId: 'gen_1',
      nested: { headers: { 'content-type': 'application/json' } },
    });
  });

  it('leaves non-secret names alone', () => {
    for (const name of ['requestId', 'generationId', 'keyId', 'workspaceId', 'route', 'keys', 'monkey']) {
      expect(isSecretFieldName(name), name).toBe(false);
    }
    for (const name of [
      'secret',
      'Token',
      'PASSWORD',
      'Authorization',
      'apiKey',
      'api_key',
      'x-api-key',
      'key',
      'adminToken',
      'secretKey',
      's3SecretKey',
    ]) {
      expect(isSecretFieldName(name), name).toBe(true);
    }
  });

  it('nothing secret reaches the captured log lines', () => {
    const { logger, lines } = capture();
    const req = logger.child({ requestId: 'req_1' });
    req.info(`auth with ${API_KEY}`, { headers: { authorization: `Bearer ${API_KEY}` } });
    req.warn('webhook endpoint created', { endpoint: { id: 'whe_1', secret: WHSEC }, note: `secret is ${WHSEC}` });
    req.error('mongo down', { err: new Error(`connect failed mongodb://u:${ADMIN_TOKEN}@db:27017 using ${API_KEY}`) });
    req.info('admin call', { config: { adminToken: ADMIN_TOKEN, s3: { secretKey: 'minio-secret-value' } } });
    req.info('x', { list: [[[{ deeper: { value: `Bearer ${ADMIN_TOKEN}` } }]]] });
    const all = lines.join('');
    expect(all).not.toMatch(/svc_live_[A-Za-z0-9]{8,}/);
    expect(all).not.toMatch(/whsec_[A-Za-z0-9]{4,}/);
    expect(all).not.toContain(ADMIN_TOKEN);
    expect(all).not.toContain('minio-secret-value');
    expect(lines).toHaveLength(5);
  });
});
