/// <reference lib="dom" />
// The Overview, the paged Generations list and a generation's detail in real Chromium, on a
// stack with 250+ generations (completed and failed, two templates) and one webhook endpoint
// whose receiver refuses failure events and accepts the rest. Most generations are stored
// as final rows and counted in the statistics the way the render role counts them (rendering
// 250 PDFs would take the machine minutes); two are rendered for real. The Overview's numbers
// match the API's counts for the same period, its chart is visible with a table as text
// alternative, "Next page" reaches the oldest generation and "Previous page" comes back, a
// failed generation shows its error, attempts and delivery attempts, "Render again" makes a
// new generation. A batch still running (8 items: 3 completed, 1 failed, 4 pending) is listed
// under "Batches in progress" with a progress bar, and its link opens the Generations list
// filtered by it. axe-core finds no serious or critical violation; screenshots are kept.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { Browser } from 'puppeteer';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import { GenerationAdminService } from '../../src/gen/docgen/admin/v1/generation_pb.js';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { StatsPeriod, WorkspaceStatsService } from '../../src/gen/docgen/admin/v1/stats_pb.js';
import { GenerationStatus } from '../../src/gen/docgen/v1/generation_pb.js';
import { COLLECTIONS, type GenerationDoc } from '../../src/store/documents.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { request } from './api-stack.ts';
import {
  SCREENSHOT_DIR,
  checkScreen,
  click,
  launchBrowser,
  openPage,
  acceptInvitation,
  screenshotOnFailure,
  startPortalStack,
  waitForText,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const STORED = 252;

let stack: PortalStack;
let browser: Browser;
let receiver: HttpReceiver;
let workspaceId: string;
let owner: WatchedPage;
let oldestId: string;
let completedId: string;
let failedId: string;
let batchId: string;

function adminClients() {
  const transport = createConnectTransport({
    baseUrl: stack.origin,
    httpVersion: '1.1',
    interceptors: [
      (next) => (req) => (req.header.set('authorization', `Bearer ${stack.api.deps.adminToken}`), next(req)),
    ],
  });
  return {
    stats: createClient(WorkspaceStatsService, transport),
    generations: createClient(GenerationAdminService, transport),
  };
}

async function template(name: string, body: string): Promise<string> {
  const { templates } = stack.api.app.infrastructure.repositories;
  const content: TemplateVersionContent = {
    body,
    css: '',
    partials: {},
    variables: [
      { name: 'number', required: false, description: '' },
      { name: 'total', required: false, description: '' },
    ],
    pdfOptions: DEFAULT_PDF_OPTIONS,
  };
  const { template: created } = await templates.create(parseId('workspace', workspaceId)!, name, content);
  await templates.publish(created._id, 1);
  return formatId('template', created._id);
}

beforeAll(async () => {
  [stack, browser, receiver] = await Promise.all([startPortalStack(), launchBrowser(), startHttpReceiver()]);
  // The endpoint's receiver refuses failure events (the delivery fails and is retried) and accepts the rest.
  receiver.answerOtherwise((req) => ({ status: /generation\.failed/.test(req.body.toString()) ? 500 : 204 }));
  workspaceId = await stack.api.workspace('Acme Overview');
  const ws = parseId('workspace', workspaceId)!;
  const invoice = await template('Invoice', '<h1>Invoice {{ number }}</h1><p>Total {{ total }}</p>');
  const broken = await template('Broken letter', '<p>{% if true %}never closed</p>');
  await stack.webhooks.createWebhookEndpoint({
    workspaceId,
    url: receiver.url,
    events: ['generation.completed', 'generation.failed'],
  });

  // The stored history: final rows over the last 20 hours, counted as the render role counts them.
  const { generations, stats } = stack.api.app.infrastructure.repositories;
  const rows: GenerationDoc[] = [];
  const now = Date.now();
  for (let i = 0; i < STORED; i++) {
    const failed = i % 7 === 3;
    const createdAt = new Date(now - 20 * 3_600_000 + i * 4 * 60_000);
    const templateRef = failed ? broken : invoice;
    const doc = generations.newDoc(
      {
        workspaceId: ws,
        templateId: parseId('template', templateRef)!,
        templateRef,
        templateName: failed ? 'Broken letter' : 'Invoice',
        data: { number: `INV-${i}`, total: i * 10 },
      },
      createdAt,
    );
    Object.assign(doc, {
      status: failed ? 'FAILED' : 'COMPLETED',
      updatedAt: new Date(createdAt.getTime() + 800 + (i % 9) * 300),
      attempts: 1,
      pickedUpAt: new Date(createdAt.getTime() + 100),
      error: failed ? 'Liquid syntax error: tag "if" not closed' : null,
      errorCode: failed ? 'LIQUID_ERROR' : null,
      eventPublished: true,
      outputKey: failed ? null : `never-stored/${i}.pdf`,
    });
    rows.push(doc);
  }
  await stack.api.app.infrastructure.mongo.db.collection<GenerationDoc>(COLLECTIONS.generations).insertMany(rows);
  for (const doc of rows) {
    await stats.countGeneration(doc);
    await stats.settleGeneration(doc);
  }
  oldestId = formatId('generation', rows[0]!._id);

  // A batch still running: 3 items completed, 1 failed (counted, as the render role counts
  // them), 4 pending (their jobs "published" an hour ahead, so no render process takes them
  // during the test). Written the way the batch API writes it (queue rows and counters too).
  const { batches } = stack.api.app.infrastructure.repositories;
  const batch = batches.newDoc({ _id: new ObjectId(), workspaceId: ws, total: 8, merge: false, itemEvents: false });
  batchId = formatId('batch', batch._id);
  await batches.insertOnce(batch);
  const items = Array.from({ length: 8 }, (_, index) => {
    const createdAt = new Date(now - 10 * 60_000);
    const doc = generations.newDoc(
      {
        workspaceId: ws,
        templateId: parseId('template', invoice)!,
        templateRef: invoice,
        templateName: 'Invoice',
        data: { number: `B-${index}`, total: index },
        batch: { batchId, index, itemEvents: false },
      },
      createdAt,
    );
    const outcome = index < 3 ? 'COMPLETED' : index === 3 ? 'FAILED' : null;
    if (outcome) {
      Object.assign(doc, {
        status: outcome,
        updatedAt: new Date(createdAt.getTime() + 1_500),
        attempts: 1,
        error: outcome === 'FAILED' ? 'Liquid syntax error: tag "if" not closed' : null,
        errorCode: outcome === 'FAILED' ? 'LIQUID_ERROR' : null,
        eventPublished: true,
        outputKey: outcome === 'COMPLETED' ? `never-stored/b${index}.pdf` : null,
      });
    } else {
      doc.jobPublishedAt = new Date(now + 3_600_000);
    }
    return doc;
  });
  await generations.insertManyOnce(items);
  await batches.markItemsStored(batch._id);
  for (const item of items.slice(0, 4)) {
    await stats.countGeneration(item);
    await stats.settleGeneration(item);
    await batches.countItem(batch._id, item.batchIndex!, item.status as 'COMPLETED' | 'FAILED');
  }

  // Two rendered for real: one completes, one fails; each causes a delivery.
  const key = await stack.api.key(workspaceId);
  const create = async (templateId: string) => {
    const res = await request(stack.api.baseUrl, {
      method: 'POST',
      path: '/v1/generations',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ templateId, variables: { number: 'INV-LIVE', total: 99 } }),
    });
    expect(res.status, res.text).toBe(201);
    return (res.body as { id: string }).id;
  };
  completedId = await create(invoice);
  failedId = await create(broken);
  const { generations: admin } = adminClients();
  for (const id of [completedId, failedId]) {
    await pollUntil(
      () => admin.getGeneration({ id }),
      (r) => r.generation!.status === GenerationStatus.COMPLETED || r.generation!.status === GenerationStatus.FAILED,
      { timeoutMs: 90_000, intervalMs: 250, description: `${id} final` },
    );
  }
  await pollUntil(
    () => Promise.resolve(receiver.requests.length),
    (n) => n >= 2,
    { timeoutMs: 30_000, description: 'both deliveries attempted' },
  );
  owner = await openPage(browser, stack.origin);
}, 300_000);

screenshotOnFailure('overview', () => owner);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await receiver?.close();
  await stack?.close();
});

/** The numeric value of the Overview card with this label. */
async function card(label: string): Promise<number> {
  const text = await owner.page.$$eval(
    '.card',
    (cards, wanted) =>
      cards.find((c) => c.querySelector('.card-label')?.textContent === wanted)?.querySelector('.card-value')
        ?.textContent ?? '',
    label,
  );
  return Number(text.replace(/[^0-9]/g, ''));
}

describe('portal overview, generations and detail', () => {
  it('opens on the Overview, whose numbers match the API for the same period, with a chart and its table', async () => {
    const { page } = owner;
    await acceptInvitation(stack, page, workspaceId, {
      email: 'otto.owner@example.com',
      role: MemberRole.OWNER,
      password: 'overview password that is long',
    });
    await click(page, 'Overview', 'link');
    await page.waitForSelector('aria/Overview[role="heading"]');
    const chart = await page.waitForSelector('[role="img"][aria-label^="Generations per"]', { visible: true });
    await page.waitForFunction(
      () => (document.querySelector('.chart canvas') as HTMLCanvasElement | null)?.width ?? 0 > 0,
    );

    // The same period from the API: GetWorkspaceStats, and the generations list paged with its bounds.
    const { stats, generations } = adminClients();
    const api = await stats.getWorkspaceStats({ workspaceId, period: StatsPeriod.STATS_PERIOD_24H });
    const listed = async (status: GenerationStatus) => {
      let n = 0;
      let pageToken = '';
      do {
        const res = await generations.listGenerations({
          workspaceId,
          status,
          pageSize: 100,
          pageToken,
          createdAfter: api.periodStart,
          createdBefore: api.periodEnd,
        });
        n += res.generations.length;
        pageToken = res.nextPageToken;
      } while (pageToken);
      return n;
    };
    const completed = await listed(GenerationStatus.COMPLETED);
    const failed = await listed(GenerationStatus.FAILED);
    expect(Number(api.completed)).toBe(completed);
    expect(Number(api.failed)).toBe(failed);
    expect(completed + failed).toBeGreaterThanOrEqual(250);
    expect(await card('Completed')).toBe(completed);
    expect(await card('Failed')).toBe(failed);
    expect(await chart!.evaluate((el) => el.getAttribute('aria-label'))).toContain(
      `${completed.toLocaleString()} completed`,
    );
    await waitForText(page, 'LIQUID_ERROR');
    await waitForText(page, 'Succeeded');
    await page.waitForSelector('[role="img"][aria-label^="Create to final latency per template"]', { visible: true });

    await checkScreen(owner, 'overview');
    mkdirSync(DOCS_IMAGES, { recursive: true });
    copyFileSync(join(SCREENSHOT_DIR, 'overview.png'), join(DOCS_IMAGES, 'portal-overview.png'));

    // The text alternative: the chart's numbers as a table.
    const toggles = await page.$$('aria/Show as table[role="button"]');
    await toggles[0]!.click();
    const table = await page.waitForSelector('aria/Generations per hour, by final status[role="table"]', {
      visible: true,
    });
    const sums = await table!.evaluate((t) =>
      Array.from(t.querySelectorAll('tbody tr')).reduce(
        (acc, row) => {
          const cells = Array.from(row.querySelectorAll('td')).map((c) =>
            Number(c.textContent!.replace(/[^0-9]/g, '')),
          );
          return [acc[0]! + cells[0]!, acc[1]! + cells[1]!];
        },
        [0, 0],
      ),
    );
    expect(sums).toEqual([completed, failed]);
    await toggles[1]!.click();
    await page.waitForSelector('aria/Create to final latency per template[role="table"]', { visible: true });
    await waitForText(page, 'Broken letter');
    await checkScreen(owner, 'overview-table');
  });

  it('lists the running batch with a progress bar that links to its generations', async () => {
    const { page } = owner;
    await page.goto(`${stack.origin}/`);
    await page.waitForSelector('aria/Overview[role="heading"]');
    await page.waitForSelector('aria/Batches in progress[role="heading"]');
    const bar = await page.waitForSelector(`aria/Batch ${batchId}: 4 of 8 items final[role="progressbar"]`, {
      visible: true,
    });
    expect(await bar!.evaluate((p) => [(p as HTMLProgressElement).value, (p as HTMLProgressElement).max])).toEqual([
      4, 8,
    ]);
    await waitForText(page, '4 of 8 items final: 3 completed, 1 failed');
    // The queue counts the batch's pending items.
    expect(await card('Queue now')).toBe(4);
    const { stats } = adminClients();
    const api = await stats.getWorkspaceStats({ workspaceId, period: StatsPeriod.STATS_PERIOD_24H });
    expect(api.batchesInProgress.map((b) => [b.id, Number(b.total), Number(b.completed), Number(b.failed)])).toEqual([
      [batchId, 8, 3, 1],
    ]);
    await checkScreen(owner, 'overview-batches');

    await click(page, batchId, 'link');
    await page.waitForSelector('aria/Generations[role="heading"]');
    await page.waitForSelector(`aria/Batch ${batchId}[role="region"]`);
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 8, { timeout: 20_000 });
    expect(new URL(page.url()).searchParams.get('batch')).toBe(batchId);
    await checkScreen(owner, 'overview-batch-generations');
    await page.goto(`${stack.origin}/`); // the next test opens the Generations list unfiltered
    await page.waitForSelector('aria/Overview[role="heading"]');
  });

  it('pages the generations: "Next page" reaches the oldest and "Previous page" comes back, filters kept', async () => {
    const { page } = owner;
    await click(page, 'Generations', 'link');
    await page.waitForSelector('aria/Generations[role="heading"]');
    await waitForText(page, 'more on the next page');
    const firstRow = await page.$eval('tbody tr a', (a) => a.textContent);
    let pages = 1;
    while (!(await page.$(`aria/${oldestId}[role="link"]`))) {
      await click(page, 'Next page', 'button');
      pages++;
      await waitForText(page, `Rows ${(pages - 1) * 100 + 1}–`);
      expect(pages).toBeLessThan(10);
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    await waitForText(page, 'the last page');
    expect(await page.$eval('aria/Next page[role="button"]', (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await checkScreen(owner, 'generations-last-page');
    while (pages > 1) {
      await click(page, 'Previous page', 'button');
      pages--;
      await waitForText(page, `Rows ${(pages - 1) * 100 + 1}–`);
    }
    expect(await page.$eval('tbody tr a', (a) => a.textContent)).toBe(firstRow);

    // A filter holds on every page: failed ones only (about one in seven), one page.
    await page.select('select', String(GenerationStatus.FAILED));
    await page.waitForFunction(
      () => {
        const badges = Array.from(document.querySelectorAll('tbody .badge')).map((e) => e.textContent);
        return badges.length > 0 && badges.every((t) => t === 'Failed');
      },
      { timeout: 20_000, polling: 100 },
    );
    await waitForText(page, 'Rows 1–');
  });

  it("shows a failed generation's error, attempts and delivery attempts", async () => {
    const { page } = owner;
    await page.goto(`${stack.origin}/generations/${failedId}`);
    await page.waitForSelector(`aria/Generation ${failedId}[role="heading"]`);
    await waitForText(page, 'LIQUID_ERROR');
    await waitForText(page, 'Picked up by a render process (attempt 1)');
    await waitForText(page, '1 attempt');
    await page.waitForSelector('aria/Deliveries of this generation[role="list"]');
    await waitForText(page, 'HTTP 500');
    await checkScreen(owner, 'generation-failed');
  });

  it('shows a completed generation with its PDF inline, and "Render again" creates a new generation', async () => {
    const { page } = owner;
    await page.goto(`${stack.origin}/generations/${completedId}`);
    await page.waitForSelector(`aria/Generation ${completedId}[role="heading"]`);
    await page.waitForSelector('.pdf-page canvas', { visible: true, timeout: 30_000 });
    await waitForText(page, 'Invoice INV-LIVE');
    await waitForText(page, 'HTTP 204');
    await waitForText(page, 'Completed');
    await checkScreen(owner, 'generation-detail');
    copyFileSync(join(SCREENSHOT_DIR, 'generation-detail.png'), join(DOCS_IMAGES, 'portal-generation-detail.png'));

    await click(page, 'Render again', 'button');
    await waitForText(page, 'Rendered again as');
    const newId = await page.$eval('dd ul.plain a', (a) => a.textContent!);
    expect(newId).toMatch(/^gen_/);
    expect(newId).not.toBe(completedId);
    const { generations } = adminClients();
    const again = await generations.getGeneration({ id: newId });
    expect(again.renderedFrom).toBe(completedId);
    expect(again.generation!.data).toEqual({ number: 'INV-LIVE', total: 99 });
    expect(owner.problems).toEqual([]);
    expect(owner.foreignRequests).toEqual([]);
  });
});
