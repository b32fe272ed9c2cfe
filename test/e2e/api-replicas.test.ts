// Two API processes (`docgen serve --role api`, real child processes) against the same
// nats-server, MongoDB (stand-in or DOCGEN_TEST_MONGODB_URL) and s3rver: a key's rate limit
// is one budget across both, and a revoke made through the admin API of one is honoured by
// the other within 1 s (docs/interface.md#authentication).
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  adminClients,
  request,
  spawnServe,
  startDeps,
  type AdminClients,
  type ChildApi,
  type Deps,
} from './api-stack.ts';

let deps: Deps;
let a: ChildApi;
let b: ChildApi;
let admin: AdminClients;
let workspaceId: string;
const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });

beforeAll(async () => {
  deps = await startDeps();
  [a, b] = await Promise.all([spawnServe(deps, 'api'), spawnServe(deps, 'api')]);
  admin = adminClients(a.adminPort!, deps.adminToken);
  workspaceId = (await admin.workspaces.createWorkspace({ name: 'replicas' })).workspace!.id;
});

afterAll(async () => {
  agent.destroy();
  await Promise.all([a?.proc.stop(5_000), b?.proc.stop(5_000)]);
  await deps?.stop();
});

function list(replica: ChildApi, secret: string) {
  return request(replica.baseUrl, {
    path: '/v1/generations?pageSize=1',
    headers: { Authorization: `Bearer ${secret}` },
    agent,
  });
}

it('one key cannot exceed its rate by spreading requests over both replicas', async () => {
  const perSecond = 5;
  const burst = 5;
  const key = await admin.apiKeys.createApiKey({
    workspaceId,
    name: 'limited',
    scopes: ['generations:read'],
    rateLimitPerSecond: perSecond,
    rateLimitBurst: burst,
  });
  const secret = key.secret;
  const counts = new Map<string, { ok: number; limited: number; other: number }>([
    ['a', { ok: 0, limited: 0, other: 0 }],
    ['b', { ok: 0, limited: 0, other: 0 }],
  ]);
  const durationMs = 3_000;
  const started = Date.now();
  let lastStart = started;
  // Two workers per replica, back to back: far more than 5/s offered to each.
  const worker = async (name: 'a' | 'b', replica: ChildApi) => {
    while (Date.now() - started < durationMs) {
      lastStart = Math.max(lastStart, Date.now());
      const answer = await list(replica, secret);
      const count = counts.get(name)!;
      if (answer.status === 200) count.ok++;
      else if (answer.status === 429) {
        count.limited++;
        expect(answer.body.error.code).toBe('RATE_LIMITED');
        expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      } else count.other++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  await Promise.all([worker('a', a), worker('a', a), worker('b', b), worker('b', b)]);
  const elapsed = (lastStart - started) / 1000;
  const ok = counts.get('a')!.ok + counts.get('b')!.ok;
  const allowed = burst + perSecond * elapsed;
  // GCRA admits at most burst + rate·t; 1 of slack for clock edges between the replicas.
  expect(ok, JSON.stringify({ counts: Object.fromEntries(counts), elapsed })).toBeLessThanOrEqual(
    Math.ceil(allowed) + 1,
  );
  // ... and it is a rate limit, not a wall: close to the budget was served, by both replicas.
  expect(ok).toBeGreaterThanOrEqual(Math.floor(allowed * 0.7));
  expect(counts.get('a')!.ok).toBeGreaterThan(0);
  expect(counts.get('b')!.ok).toBeGreaterThan(0);
  expect(counts.get('a')!.limited + counts.get('b')!.limited).toBeGreaterThan(0);
  expect(counts.get('a')!.other + counts.get('b')!.other).toBe(0);
});

it('a revoke through the admin API is honoured by the other replica within 1 s', async () => {
  for (let round = 0; round < 2; round++) {
    const key = await admin.apiKeys.createApiKey({
      workspaceId,
      name: `revoked ${round}`,
      scopes: ['generations:read'],
      rateLimitPerSecond: 1000,
      rateLimitBurst: 1000,
    });
    // B has the key cached as valid.
    for (let i = 0; i < 3; i++) expect((await list(b, key.secret)).status).toBe(200);
    const revokeSent = Date.now();
    await admin.apiKeys.revokeApiKey({ id: key.apiKey!.id });
    // A request every 50 ms, each on its own, so one slow answer does not delay the next probe.
    const refusedAt: number[] = [];
    const probes: Promise<void>[] = [];
    while (refusedAt.length === 0 && Date.now() - revokeSent < 3_000) {
      probes.push(
        list(b, key.secret).then((answer) => {
          if (answer.status === 401) {
            expect(answer.body.error.code).toBe('API_KEY_REVOKED');
            refusedAt.push(Date.now());
          } else expect(answer.status).toBe(200);
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await Promise.all(probes);
    expect(refusedAt.length, 'B refused the revoked key').toBeGreaterThan(0);
    expect(
      Math.min(...refusedAt) - revokeSent,
      'ms from the revoke to the first refusal on the other replica',
    ).toBeLessThan(1_000);
    // And from then on, on both replicas.
    expect((await list(a, key.secret)).body.error.code).toBe('API_KEY_REVOKED');
    expect((await list(b, key.secret)).body.error.code).toBe('API_KEY_REVOKED');
  }
});
