import { afterAll, beforeAll, expect, it } from 'vitest';
import { startApiStack, postJson, request, bearer, publishedTemplate, type ApiStack } from './api-stack.ts';
let s: ApiStack;
beforeAll(async () => { s = await startApiStack(); });
afterAll(async () => { await s?.close(); });
it('smoke', async () => {
  const ws = await s.workspace();
  const k = await s.key(ws);
  const tpl = await publishedTemplate(s.admin, ws);
  const r = await postJson(s.baseUrl, k.secret, { templateId: tpl, variables: { name: 'x' } });
  console.log(r.status, r.headers, r.body);
  const g = await request(s.baseUrl, { path: `/v1/generations/${r.body.id}`, headers: bearer(k.secret) });
  console.log(g.status, g.body);
  const l = await request(s.baseUrl, { path: `/v1/generations?pageSize=1`, headers: bearer(k.secret) });
  console.log(l.status, l.body);
  expect(r.status).toBe(201);
});
