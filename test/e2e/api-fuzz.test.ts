// Fuzz-style: a few thousand generated bodies and headers thrown at REST and Connect. No answer
// may be a 5xx, and the service answers a plain request afterwards. Seeded, so a failure repeats.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startApiStack, type ApiStack } from './api-stack.ts';

let stack: ApiStack;
let auth: string;

beforeAll(async () => {
  stack = await startApiStack();
  auth = `Bearer ${(await stack.key(await stack.workspace('fuzz'))).secret}`;
});

afterAll(async () => {
  await stack?.close();
});

/** Small deterministic PRNG (mulberry32). */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = prng(16);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const ATOMS = [
  '\u0000',
  '\u001b',
  '\ud800',
  '😀',
  '"',
  '\\',
  '{',
  '[',
  ']',
  '}',
  ':',
  ',',
  'a',
  '$where',
  '.',
  ' ',
  '\u202e',
  'null',
  '1e999',
  '-0',
];

function text(max = 12): string {
  let s = '';
  const n = Math.floor(random() * max);
  for (let i = 0; i < n; i++) s += pick(ATOMS);
  return s;
}

function value(depth: number): unknown {
  const r = random();
  if (depth > 40 || r < 0.3) return pick([text(), 0, -1.5, 1e308, true, false, null, '']);
  if (r < 0.55) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(random() * 4); i > 0; i--) o[text(6)] = value(depth + random() * 12);
  return o;
}

function body(): string {
  const r = random();
  if (r < 0.15) return text(40); // not JSON at all
  const doc: Record<string, unknown> = {
    templateId: pick([text(), 'tpl_000000000000000000000000', 42, null]),
    variables: value(0),
  };
  if (random() < 0.2) doc[text(5)] = value(0);
  if (random() < 0.1) doc.format = pick(['pdf', 'PDF', 1, text()]);
  let json = JSON.stringify(doc);
  if (random() < 0.15) json = json.slice(0, Math.floor(random() * json.length)); // truncated
  return json;
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/proto',
  'application/connect+json',
  '',
  ';;',
  'application/json; charset=latin1',
];
const headerValue = () =>
  text(10)
    .replace(/[\u0000-\u001f\u007f\r\n]/g, '')
    .replace(/[^\u0020-\u007e]/g, 'x');

describe('fuzz', () => {
  it('a few thousand generated requests get no 5xx, and the service still answers', async () => {
    const targets = [
      '/v1/generations',
      '/docgen.v1.GenerationService/CreateGeneration',
      '/docgen.v1.GenerationService/ListGenerations',
      `/v1/generations/${text(8)}`,
    ];
    const failures: string[] = [];
    let sent = 0;
    const one = async () => {
      const path = pick(targets).replace(/[^\u0021-\u007e]/g, '%ff');
      const headers: Record<string, string> = {
        'Content-Type': pick(CONTENT_TYPES),
        Authorization: pick([auth, auth, '', `Bearer ${headerValue()}`]),
      };
      if (random() < 0.2) headers['Idempotency-Key'] = headerValue();
      if (random() < 0.2) headers['Connect-Protocol-Version'] = pick(['1', '2', headerValue()]);
      if (random() < 0.1) headers['X-Request-Id'] = headerValue();
      const method = pick(['POST', 'POST', 'POST', 'GET', 'PUT']);
      const b = method === 'GET' && random() < 0.7 ? undefined : body();
      const answer = await request(stack.baseUrl, { method, path, headers, body: b, agent: false });
      sent += 1;
      if (answer.status >= 500)
        failures.push(
          `${method} ${path} ${JSON.stringify(b)?.slice(0, 200)} -> ${answer.status} ${answer.text.slice(0, 200)}`,
        );
    };
    const started = Date.now();
    const workers = Array.from({ length: 8 }, async () => {
      while (sent < 3000 && Date.now() - started < 40_000) await one();
    });
    await Promise.all(workers);
    expect(failures.slice(0, 5)).toEqual([]);
    expect(sent).toBeGreaterThan(1000);
    const alive = await request(stack.baseUrl, { path: '/v1/generations', headers: { Authorization: auth } });
    expect(alive.status).toBe(200);
  }, 60_000);
});
