/// <reference lib="dom" />
// The portal in real Chromium against a docgen-dev-like stack, the way a workspace owner and
// a viewer use it: accept an invitation, sign out and in, write a template and watch the live
// preview follow the typing, publish, create a key and use it over REST, find the generation
// and its PDF, add a webhook endpoint, send a test event to a loopback receiver, see the
// delivery and its attempt, redeliver. A viewer sees no "Create key". Every screen passes
// axe-core (no serious or critical violation), loads nothing from another origin and
// violates no CSP; screenshots go to test-output/screenshots/.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { fromJson } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import type { Browser, ElementHandle } from 'puppeteer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { sampleInvoiceContent, sampleInvoiceValues } from '../../src/dev/dev-seed.ts';
import { PREVIEW_DEBOUNCE_MS } from '../../portal/src/editor/preview-timing.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { request } from './api-stack.ts';
import {
  acceptInvitation,
  SCREENSHOT_DIR,
  checkScreen,
  click,
  fill,
  launchBrowser,
  openPage,
  setPasswordFromInvitation,
  regionText,
  startPortalStack,
  waitForText,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

let stack: PortalStack;
let browser: Browser;
let receiver: HttpReceiver;
let workspaceId: string;
let owner: WatchedPage;
const OWNER = { email: 'olga.owner@example.com', password: 'correct horse battery staple' };

beforeAll(async () => {
  [stack, browser, receiver] = await Promise.all([
    startPortalStack(),
    launchBrowser(),
    startHttpReceiver({ defaultAnswer: { status: 200, body: 'thanks from the test receiver' } }),
  ]);
  workspaceId = await stack.api.workspace('Acme Billing');
  owner = await openPage(browser, stack.origin);
}, 180_000);

// A failed step leaves a picture of the screen it failed on.
afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && owner) {
    await owner.page
      .screenshot({ path: join(SCREENSHOT_DIR, `failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`) })
      .catch(() => {});
    console.log(`page problems: ${JSON.stringify(owner.problems)}; url ${owner.page.url()}`);
  }
});

afterAll(async () => {
  await browser?.close().catch(() => {});
  await receiver?.close();
  await stack?.close();
});

describe('portal, as a workspace owner', () => {
  it('accepts an invitation, signs out and signs in again', async () => {
    const { page } = owner;
    const invitePath = await stack.invite(workspaceId, OWNER.email, MemberRole.OWNER);
    await page.goto(stack.origin + invitePath);
    await page.waitForSelector('aria/Set password[role="button"]');
    await checkScreen(owner, 'invitation');
    await setPasswordFromInvitation(page, { password: OWNER.password, name: 'Olga Owner' });
    expect(new URL(page.url()).pathname).toBe('/templates');
    await checkScreen(owner, 'templates-empty');

    await click(page, 'Sign out', 'button');
    await page.waitForSelector('aria/Sign in[role="button"]');
    await checkScreen(owner, 'sign-in');
    await fill(page, 'Email', OWNER.email);
    await fill(page, 'Password', 'wrong password, surely');
    await click(page, 'Sign in', 'button');
    await page.waitForSelector('[role="alert"]');
    expect(await page.$eval('[role="alert"]', (el) => el.textContent)).toMatch(/\w+/);
    await fill(page, 'Password', OWNER.password);
    await click(page, 'Sign in', 'button');
    await page.waitForSelector('aria/Overview[role="heading"]');
  });

  it('creates a template whose preview follows the typing, and publishes it', async () => {
    const { page } = owner;
    // Signing in lands on the Overview; templates are one link away.
    await click(page, 'Templates', 'link');
    await click(page, 'New template', 'button');
    await fill(page, 'Template name', 'Order confirmation');
    await page.waitForFunction(
      () => document.querySelector('[aria-label="Preview"]')?.textContent?.includes('Untitled'),
      { timeout: 30_000 },
    );
    const editor = await page.waitForSelector('aria/Template body');
    await editor!.click();
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    // Plain words, typed key by key (markup would be completed by the editor as one types).
    await page.keyboard.type('Shipped by Portal Express');
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('Shipped by Portal Express'),
      { timeoutMs: 20_000, description: 'the preview to show the typed text' },
    );
    await checkScreen(owner, 'template-editor');

    // A Liquid error appears at its line, and the preview says why it did not render.
    await page.keyboard.press('Enter');
    await page.keyboard.sendCharacter('{% if %}');
    await waitForText(page, 'Error in body line 3');
    await page.waitForSelector('.cm-lint-marker-error');
    await waitForText(page, 'Preview out of date');
    for (let i = 0; i < '{% if %}'.length + 1; i++) await page.keyboard.press('Backspace');
    await pollUntil(
      () => page.$('.cm-lint-marker-error'),
      (marker) => marker === null,
      { timeoutMs: 20_000, description: 'the error marker to go' },
    );

    // The variables the API key's generation sends below, declared from the editor's suggestion.
    await page.keyboard.sendCharacter('<p>{{ customer.name }} {{ order_number }}</p>');
    await waitForText(page, 'does not declare: customer, order_number.', 30_000);
    await click(page, 'Declare suggested variables', 'button');
    await waitForText(page, 'Declared variables (2)');

    await click(page, 'Publish', 'button');
    await page.waitForFunction(() => /\/templates\/tpl_/.test(location.pathname), { timeout: 20_000 });
    await waitForText(page, 'Published: v1');
    await waitForText(page, 'Version history');
    await click(page, 'Templates', 'link');
    await page.waitForSelector('aria/Order confirmation[role="link"]');
    await waitForText(page, 'v1');
    await checkScreen(owner, 'templates');
  });

  it('uploads an image asset and lists it', async () => {
    const { page } = owner;
    const file = join(uniqueRunDir('portal-asset'), 'logo.png');
    // A 1×1 PNG.
    writeFileSync(
      file,
      Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
        'base64',
      ),
    );
    await click(page, 'Assets', 'link');
    const input = (await page.waitForSelector('input[type="file"]')) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(file);
    await click(page, 'Upload asset', 'button');
    await waitForText(page, 'Uploaded logo.png');
    await waitForText(page, 'image/png');
    await checkScreen(owner, 'assets');
  });

  it('creates an API key that works over REST, and finds the generation with its PDF', async () => {
    const { page } = owner;
    await click(page, 'API keys', 'link');
    await fill(page, 'Key name', 'billing service');
    await click(page, 'Create key', 'button');
    const secret = await (await page.waitForSelector('[data-secret]'))!.evaluate((el) => el.textContent ?? '');
    expect(secret).toMatch(/^svc_live_/);
    await checkScreen(owner, 'api-keys');

    const templateId = (await stack.api.admin.templates.listTemplates({ workspaceId })).templates[0]!.id;
    const created = await request(stack.api.baseUrl, {
      method: 'POST',
      path: '/v1/generations',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ templateId, variables: { customer: { name: 'Grace Hopper' }, order_number: 'B-2002' } }),
    });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    await pollUntil(
      () =>
        request(stack.api.baseUrl, { path: `/v1/generations/${id}`, headers: { authorization: `Bearer ${secret}` } }),
      (r) => r.body?.status === 'COMPLETED',
      { timeoutMs: 60_000, intervalMs: 250, description: 'the generation to complete' },
    );

    await click(page, 'Generations', 'link');
    await click(page, id, 'link');
    await waitForText(page, 'Completed');
    await waitForText(page, 'Grace Hopper');
    const href = await (await page.waitForSelector('aria/Download PDF[role="link"]'))!.evaluate(
      (el) => (el as HTMLAnchorElement).href,
    );
    const pdf = await fetch(href);
    expect(pdf.status).toBe(200);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    await checkScreen(owner, 'generation-detail');
    await click(page, 'All generations', 'link');
    await page.waitForSelector(`aria/${id}[role="link"]`);
    await checkScreen(owner, 'generations');

    // A second key, revoked after a confirmation, stops working at once.
    await click(page, 'API keys', 'link');
    await fill(page, 'Key name', 'to revoke');
    await click(page, 'Create key', 'button');
    const doomed = await (await page.waitForSelector('[data-secret]'))!.evaluate((el) => el.textContent ?? '');
    await click(page, 'Done', 'button');
    const revokeButtons = await page.$$('aria/Revoke[role="button"]');
    expect(revokeButtons).toHaveLength(2);
    await revokeButtons[0]!.click(); // newest first
    await click(page, 'Revoke key', 'button');
    await waitForText(page, 'Revoked');
    const refused = await request(stack.api.baseUrl, {
      path: `/v1/generations/${id}`,
      headers: { authorization: `Bearer ${doomed}` },
    });
    expect(refused.status).toBe(401);
  });

  it('adds an endpoint, sends a test event to it, sees the delivery and redelivers it', async () => {
    const { page } = owner;
    await click(page, 'Webhooks', 'link');
    await fill(page, 'Endpoint URL', receiver.url);
    await click(page, 'Add endpoint', 'button');
    const secret = await (await page.waitForSelector('[data-secret]'))!.evaluate((el) => el.textContent ?? '');
    expect(secret).toMatch(/^whsec_/);
    await checkScreen(owner, 'webhooks');
    const before = receiver.requests.length;
    await click(page, 'Send test event', 'button');
    await waitForText(page, 'Test event');
    await pollUntil(
      () => receiver.requests.length,
      (n) => n > before,
      { timeoutMs: 20_000, description: 'the test event at the receiver' },
    );
    const test = receiver.requests[receiver.requests.length - 1]!;
    expect(test.header('webhook-signature')).toMatch(/^v1,/);

    await click(page, 'See the delivery', 'link');
    await pollUntil(
      async () => {
        await click(page, 'Refresh', 'button');
        return page.evaluate(() => document.body.innerText);
      },
      (text) => text.includes('HTTP 200') && text.includes('thanks from the test receiver'),
      { timeoutMs: 20_000, intervalMs: 500, description: 'the delivery with its attempt' },
    );
    await checkScreen(owner, 'deliveries');
    const sent = receiver.requests.length;
    await click(page, 'Redeliver', 'button');
    await waitForText(page, 'is being sent again');
    await pollUntil(
      () => receiver.requests.length,
      (n) => n > sent,
      { timeoutMs: 20_000, description: 'the redelivery at the receiver' },
    );
  });

  it('creates a test key (Mode: Test key) and an endpoint that receives test events; shows test generations as Test', async () => {
    const { page } = owner;
    await click(page, 'API keys', 'link');
    await fill(page, 'Key name', 'staging');
    await click(page, 'Test key', 'radio');
    await click(page, 'Create key', 'button');
    const secret = await (await page.waitForSelector('[data-secret]'))!.evaluate((el) => el.textContent ?? '');
    expect(secret).toMatch(/^svc_test_/);
    await click(page, 'Done', 'button');
    await waitForText(page, 'Test');
    await checkScreen(owner, 'api-keys-test-mode');

    await click(page, 'Webhooks', 'link');
    await fill(page, 'Endpoint URL', `${receiver.url}/test-events`);
    await click(page, 'Receive test events', 'checkbox');
    await click(page, 'Add endpoint', 'button');
    await page.waitForSelector('[data-secret]');
    await click(page, 'Done', 'button');
    await waitForText(page, 'Test events too');
    const listed = (await stack.api.admin.webhooks.listWebhookEndpoints({ workspaceId })).endpoints;
    expect(listed.find((e) => e.url.endsWith('/test-events'))?.testEvents).toBe(true);
    expect(listed.filter((e) => !e.url.endsWith('/test-events')).map((e) => e.testEvents)).toEqual([false]);

    const templateId = (await stack.api.admin.templates.listTemplates({ workspaceId })).templates[0]!.id;
    const created = await request(stack.api.baseUrl, {
      method: 'POST',
      path: '/v1/generations',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ templateId, variables: { customer: { name: 'Test Pilot' }, order_number: 'T-1' } }),
    });
    expect(created.status, created.text).toBe(201);
    await click(page, 'Generations', 'link');
    await click(page, created.body.id as string, 'link');
    await waitForText(page, 'made with a test key');
    await checkScreen(owner, 'generation-detail-test-mode');
  });

  it('invites a member, changes their role and removes them; shows the audit log', async () => {
    const { page } = owner;
    await click(page, 'Members', 'link');
    await waitForText(page, OWNER.email);
    await fill(page, 'Email', 'eddie.editor@example.com');
    await click(page, 'Invite member', 'button');
    const link = await (await page.waitForSelector('[data-secret]'))!.evaluate((el) => el.textContent ?? '');
    expect(link).toContain('/invite/');
    await checkScreen(owner, 'members');
    await click(page, 'Done', 'button');
    await page.select('select[aria-label="Role of eddie.editor@example.com"]', '3');
    // A role change asks first (issue #31).
    await click(page, 'Change role', 'button');
    await pollUntil(
      async () => (await stack.users.listUsers({ workspaceId })).users.length,
      (n) => n === 2,
      { description: 'the invited person among the users' },
    );
    await pollUntil(
      () =>
        page.$eval('select[aria-label="Role of eddie.editor@example.com"]', (el) => (el as HTMLSelectElement).value),
      (v) => v === '3',
      { description: 'the new role shown' },
    );
    await click(page, 'Remove eddie.editor@example.com', 'button');
    await click(page, 'Remove member', 'button');
    await pollUntil(
      () => page.evaluate(() => document.body.innerText),
      (text) => !text.includes('eddie.editor@example.com'),
      { description: 'the member gone' },
    );
    await click(page, 'Audit log', 'link');
    await waitForText(page, 'removed eddie.editor@example.com from the workspace');
    await checkScreen(owner, 'audit-log');
  });

  it('stays usable 1024 px wide', async () => {
    await owner.page.setViewport({ width: 1024, height: 800 });
    await click(owner.page, 'Templates', 'link');
    await click(owner.page, 'Order confirmation', 'link');
    await owner.page.waitForFunction(
      () => Number(document.querySelector('[aria-label="Preview"]')?.getAttribute('data-preview-count')) > 0,
      { timeout: 30_000 },
    );
    const overflow = await owner.page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await checkScreen(owner, 'template-editor-1024');
    await owner.page.setViewport({ width: 1280, height: 900 });
  });
});

describe('portal, for a member of two workspaces', () => {
  it('switches workspace', async () => {
    const { page } = owner;
    const second = await stack.api.workspace('Acme Labs');
    await stack.invite(second, OWNER.email, MemberRole.EDITOR);
    await page.goto(`${stack.origin}/templates`);
    await page.waitForSelector('aria/Workspace[role="combobox"]');
    await page.select('select', second);
    await waitForText(page, 'No templates yet');
    await waitForText(page, 'Editor');
    await checkScreen(owner, 'workspace-switched');
    await page.select('select', workspaceId);
    await page.waitForSelector('aria/Order confirmation[role="link"]');
  });
});

describe('portal, as a viewer', () => {
  it('reads keys and templates but is offered no "Create key" and no editing', async () => {
    const context = await browser.createBrowserContext();
    try {
      const viewer = await openPage(context, stack.origin);
      const { page } = viewer;
      await acceptInvitation(stack, page, workspaceId, {
        email: 'vera.viewer@example.com',
        role: MemberRole.VIEWER,
        password: 'viewer password that is long',
      });
      expect(await page.$('aria/New template[role="button"]')).toBeNull();
      await click(page, 'API keys', 'link');
      await waitForText(page, 'billing service');
      expect(await page.$('aria/Create key[role="button"]')).toBeNull();
      expect(await page.$('aria/Revoke[role="button"]')).toBeNull();
      await checkScreen(viewer, 'api-keys-viewer');
      await click(page, 'Templates', 'link');
      await click(page, 'Order confirmation', 'link');
      await waitForText(page, 'Template body (read-only)');
      await waitForText(page, 'Previews are rendered for owners and editors');
      expect(await page.$('aria/Publish[role="button"]')).toBeNull();
      await checkScreen(viewer, 'template-viewer');
    } finally {
      await context.close();
    }
  });
});

describe('portal performance (printed, with generous bounds)', () => {
  it('updates the preview of the sample invoice soon after a pause in typing; reports latency, bundle size and first render', async () => {
    const c = sampleInvoiceContent();
    const created = await stack.api.admin.templates.createTemplate({
      workspaceId,
      name: 'Sample invoice',
      content: {
        body: c.body,
        css: c.css,
        partials: c.partials,
        pdfOptions: c.pdfOptions,
        variables: c.variables.map((v) => ({
          name: v.name,
          required: v.required,
          description: v.description,
          ...(v.default !== undefined ? { defaultValue: fromJson(ValueSchema, v.default) } : {}),
        })),
        sampleData: sampleInvoiceValues(),
      },
    });
    const { page } = owner;
    await page.goto(`${stack.origin}/templates/${created.template!.id}`);
    const count = () => page.$eval('[aria-label="Preview"]', (el) => Number(el.getAttribute('data-preview-count')));
    await pollUntil(count, (n) => n > 0, { timeoutMs: 30_000, description: 'the first preview' });
    expect(await regionText(page, 'Preview')).toContain('INV-2026-00042');
    await checkScreen(owner, 'template-editor-invoice');
    // The secondary sections (document properties, PDF options with protection) pass axe too.
    // Opened from the keyboard (focus, Enter), as a keyboard user does: a mouse click can miss
    // while the preview's pages are still changing the layout around the section.
    for (const summary of ['Document properties', 'PDF options']) {
      const handle = await page.waitForSelector(`xpath///summary[contains(., "${summary}")]`);
      await handle!.focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction((el) => (el?.parentElement as HTMLDetailsElement | null)?.open === true, {}, handle);
      await handle!.dispose();
    }
    await click(page, 'Encrypt the PDF (AES-256)', 'checkbox');
    await page.waitForSelector('aria/Owner password');
    await (await page.waitForSelector('xpath///summary[contains(., "PDF options")]'))!.evaluate((el) =>
      el.scrollIntoView(),
    );
    await checkScreen(owner, 'template-editor-settings');
    await click(page, 'Encrypt the PDF (AES-256)', 'checkbox');
    // A setting the server would refuse is named at its field, in the server's words (the rules
    // are shared: src/domain/document-settings.ts), and the preview waits until it is fixed.
    await fill(page, 'Top margin', '10 furlongs');
    await waitForText(page, 'pdfOptions.margins.top: "10 furlongs" is not a length');
    await waitForText(page, 'a document property or PDF option is not valid');
    await checkScreen(owner, 'template-editor-settings-problem');
    await fill(page, 'Top margin', '12mm');
    await page.waitForFunction(() => !document.body.innerText.includes('10 furlongs'), { timeout: 20_000 });

    // Type one character at the end of the body, then wait: the figure is from the last
    // keystroke to the new pages on screen (debounce, render on the render role, pdf.js).
    const editor = await page.waitForSelector('aria/Template body');
    await editor!.click();
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    const latencies: number[] = [];
    const requests: number[] = [];
    const renders: number[] = [];
    const draws: number[] = [];
    for (let i = 0; i < 15; i++) {
      const before = await count();
      await page.keyboard.type(String.fromCharCode(97 + (i % 26)));
      await pollUntil(count, (n) => n > before, {
        timeoutMs: 20_000,
        intervalMs: 20,
        description: `preview update ${i}`,
      });
      const [latency, requestMs, renderMs, drawMs] = await page.$eval('[aria-label="Preview"]', (el) =>
        ['data-latency-ms', 'data-request-ms', 'data-render-ms', 'data-draw-ms'].map((a) => Number(el.getAttribute(a))),
      );
      draws.push(drawMs!);
      latencies.push(latency!);
      requests.push(requestMs!);
      renders.push(renderMs!);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
    expect(pct(95)).toBeLessThan(10_000);

    // The typed letters become version 2; the comparison shows both, rendered with one sample.
    await click(page, 'Save version', 'button');
    await waitForText(page, 'Saved as version 2');
    await page.goto(`${stack.origin}/templates/${created.template!.id}/compare?a=1&b=2`);
    for (const version of [1, 2]) {
      await pollUntil(
        () => regionText(page, `Preview of version ${version}`),
        (text) => text.includes('INV-2026-00042'),
        { timeoutMs: 30_000, description: `preview of v${version}` },
      );
    }
    await page.waitForSelector('.cm-mergeView');
    await checkScreen(owner, 'template-compare');

    // Time to first render of the templates screen: navigation start to the table on screen.
    const firstRender: number[] = [];
    for (let i = 0; i < 5; i++) {
      const fresh = await browser.newPage();
      await fresh.goto(`${stack.origin}/templates`);
      await fresh.waitForSelector('aria/Sample invoice[role="link"]');
      firstRender.push(await fresh.evaluate(() => Math.round(performance.now())));
      await fresh.close();
    }
    firstRender.sort((a, b) => a - b);

    const assets = join(fileURLToPath(new URL('../../portal/dist/assets/', import.meta.url)));
    const gz = (pattern: RegExp) =>
      readdirSync(assets)
        .filter((f) => pattern.test(f))
        .reduce((sum, f) => sum + gzipSync(readFileSync(join(assets, f))).length, 0);
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
    console.log(
      [
        `portal preview latency, keystroke pause -> new preview on screen (sample invoice, debounce ${PREVIEW_DEBOUNCE_MS} ms, n=${latencies.length}): p50 ${pct(50)} ms, p95 ${pct(95)} ms (medians: preview call ${median(requests)} ms, of which rendering ${median(renders)} ms; drawing with pdf.js ${median(draws)} ms)`,
        `portal first render of the templates screen (n=5): median ${firstRender[2]} ms, max ${firstRender[4]} ms`,
        `portal JavaScript, gzip: all ${kb(gz(/\.m?js$/))}; first load (index) ${kb(gz(/^index-.*\.js$/))}; pdf.js worker ${kb(gz(/^pdf\.worker/))}`,
      ].join('\n'),
    );
  }, 180_000);
});
