/// <reference lib="dom" />
// Batches in the portal, in real Chromium: an owner filters Generations by a batch and sees its
// progress (a progress bar with the counts, the merged PDF's link once COMPLETED) and only its
// items; a webhook endpoint can select batch.completed.
import type { Browser } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { pollUntil } from '../harness/poll-until.ts';
import { publishedTemplate, request } from './api-stack.ts';
import {
  checkScreen,
  fill,
  launchBrowser,
  openPage,
  acceptInvitation,
  startPortalStack,
  waitForText,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

let stack: PortalStack;
let browser: Browser;
let owner: WatchedPage;
let workspaceId: string;
let key: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startPortalStack(), launchBrowser()]);
  workspaceId = await stack.api.workspace('batches portal');
  key = (await stack.api.key(workspaceId)).secret;
  owner = await openPage(browser, stack.origin);
  await acceptInvitation(stack, owner.page, workspaceId, {
    email: 'bea.batches@example.com',
    role: MemberRole.OWNER,
    password: 'correct horse battery staple',
    name: 'Bea Batches',
  });
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stack?.close();
});

describe('batches in the portal', () => {
  it('Generations filtered by a batch show its progress, its merged PDF and only its items', async () => {
    const templateId = await publishedTemplate(stack.api.admin, workspaceId, 'portal batch');
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // A single generation that is not in the batch.
    await request(stack.api.baseUrl, {
      method: 'POST',
      path: '/v1/generations',
      headers,
      body: JSON.stringify({ templateId, variables: { name: 'alone' } }),
    });
    const created = await request(stack.api.baseUrl, {
      method: 'POST',
      path: '/v1/batches',
      headers,
      body: JSON.stringify({
        items: ['Ada', 'Grace', 'Edsger'].map((name) => ({ templateId, variables: { name } })),
        merge: true,
      }),
    });
    expect(created.status, created.text).toBe(201);
    const batchId = created.body.id as string;
    await pollUntil(
      async () => (await request(stack.api.baseUrl, { path: `/v1/batches/${batchId}`, headers })).body.status as string,
      (status) => status === 'COMPLETED',
      { timeoutMs: 90_000, intervalMs: 300, description: 'the batch to complete' },
    );

    const { page } = owner;
    await page.goto(`${stack.origin}/generations`);
    await page.waitForSelector('aria/Generations[role="heading"]');
    await fill(page, 'Batch', batchId);
    await page.keyboard.press('Tab');
    await waitForText(page, '3 of 3 items final: 3 completed, 0 failed');
    const progress = await page.$eval('progress[aria-label="Batch progress"]', (el) => [
      (el as HTMLProgressElement).value,
      (el as HTMLProgressElement).max,
    ]);
    expect(progress).toEqual([3, 3]);
    await page.waitForSelector('aria/Download the merged PDF[role="link"]');
    // Only the batch's three items are listed (not the single generation).
    await pollUntil(
      () => page.$$eval('table tbody tr', (rows) => rows.length),
      (rows) => rows === 3,
      { description: 'the batch items in the table' },
    );
    await checkScreen(owner, 'generations-batch');

    // The same screen from a link (a batch.completed delivery links here).
    await page.goto(`${stack.origin}/generations?batch=${batchId}`);
    await waitForText(page, '3 of 3 items final');
  }, 150_000);

  it('a webhook endpoint can select batch.completed', async () => {
    const { page } = owner;
    await page.goto(`${stack.origin}/webhooks`);
    const box = await page.waitForSelector('aria/batch.completed[role="checkbox"]', { timeout: 15_000 });
    expect(await box!.evaluate((el) => (el as HTMLInputElement).checked)).toBe(true);
    await box!.dispose();
  });
});
