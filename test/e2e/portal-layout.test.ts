/// <reference lib="dom" />
// Every screen of the portal at 800 px and at 1440 px in real Chromium (issue #31): axe-core finds
// no serious or critical violation and the page never scrolls sideways (a wide table scrolls in
// its own labelled, focusable region). In the editor the sticky Save/Publish bar never covers
// what has the focus, and keystrokes typed while a save is on its way stay as unsaved changes
// on top of the saved version. Two of the screenshots go to docs/images for docs/portal.md.
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Dialog, ElementHandle, HTTPRequest, Page } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { GenerationStatus } from '../../src/gen/docgen/v1/generation_pb.js';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { pkcs12, testPki } from '../harness/signing-certificates.ts';
import { request } from './api-stack.ts';
import {
  SCREENSHOT_DIR,
  checkScreen,
  click,
  fill,
  launchBrowser,
  openPage,
  screenshotOnFailure,
  startPortalStack,
  waitForText,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const WIDTHS = [800, 1440] as const;
const OWNER = { email: 'olivia.owner-with-a-rather-long-address@layout.example', password: 'olivia owns the layout' };
const INVITEE = 'nikolai.newcomer-who-has-not-answered-yet@layout.example';
const TEMPLATE_NAME = 'Quarterly account statement for business customers';

let stack: PortalStack;
let browser: Browser;
let receiver: HttpReceiver;
let workspaceId: string;
let templateId: string;
let generationId: string;
let invitationPath: string;
let owner: WatchedPage;

beforeAll(async () => {
  [stack, browser, receiver] = await Promise.all([startPortalStack(), launchBrowser(), startHttpReceiver()]);
  receiver.answerOtherwise(() => ({ status: 204 }));
  const { admin } = stack.api;
  workspaceId = await stack.api.workspace('Layout Works International Holding');
  const second = await stack.api.workspace('Second Workspace');

  // The owner has an account; an invitation to a second workspace waits for them on every screen.
  const invited = await admin.users.inviteUser({ workspaceId, email: OWNER.email, role: MemberRole.OWNER });
  const token = new URL(invited.inviteUrl).pathname.slice('/invite/'.length);
  const accepted = await fetch(`${stack.origin}/docgen.admin.v1.SessionService/AcceptInvitation`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: stack.origin },
    body: JSON.stringify({ token, password: OWNER.password, displayName: 'Olivia Owner' }),
  });
  expect(accepted.status).toBe(200);
  // An owner of the second workspace invites them there (an account is offered the membership, not given it).
  const other = await admin.users.inviteUser({
    workspaceId: second,
    email: 'sam@second.example',
    role: MemberRole.OWNER,
  });
  const samAccepted = await fetch(`${stack.origin}/docgen.admin.v1.SessionService/AcceptInvitation`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: stack.origin },
    body: JSON.stringify({
      token: new URL(other.inviteUrl).pathname.slice('/invite/'.length),
      password: 'sam owns the second',
    }),
  });
  expect(samAccepted.status).toBe(200);
  const offered = await fetch(`${stack.origin}/docgen.admin.v1.MemberService/InviteMember`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      origin: stack.origin,
      cookie: samAccepted.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; '),
    },
    body: JSON.stringify({ workspaceId: second, email: OWNER.email, role: 'MEMBER_ROLE_EDITOR' }),
  });
  expect(offered.status, await offered.clone().text()).toBe(200);
  expect(((await offered.json()) as { pendingInvitation?: object }).pendingInvitation).toBeDefined();
  // Someone invited who has not answered: the Members screen lists them, their link is the invitation screen.
  invitationPath = await stack.invite(workspaceId, INVITEE, MemberRole.EDITOR);

  const created = await admin.templates.createTemplate({
    workspaceId,
    name: TEMPLATE_NAME,
    content: {
      body: '<h1>Statement {{ number }}</h1>\n<p>Customer: {{ customer.name }}</p>\n<p>Total {{ total }}</p>',
      css: 'h1 { color: #0b1f44; }',
      variables: [
        { name: 'number', required: true, description: 'The statement number as printed in the heading' },
        { name: 'customer', required: false, description: 'The customer the statement is addressed to' },
        { name: 'total', required: false, description: 'The amount due, formatted' },
      ],
      sampleData: { number: 'ST-2026-0042', customer: { name: 'Nordlicht Software GmbH' }, total: '1 234,00 EUR' },
    },
    publish: true,
  });
  templateId = created.template!.id;
  await admin.templates.createTemplateVersion({
    templateId,
    content: {
      body: '<h1>Statement {{ number }}</h1>\n<p>Customer: {{ customer.name }}</p>\n<p>Amount due {{ total }}</p>',
      css: 'h1 { color: #1d4ed8; }',
      variables: [{ name: 'number', required: true }, { name: 'customer' }, { name: 'total' }],
      sampleData: { number: 'ST-2026-0042', customer: { name: 'Nordlicht Software GmbH' }, total: '1 234,00 EUR' },
    },
    publish: false,
  });
  await admin.webhooks.createWebhookEndpoint({ workspaceId, url: receiver.url, events: ['generation.completed'] });
  await admin.assets.uploadAsset({
    workspaceId,
    name: 'company-logo-with-a-long-file-name.svg',
    content: new TextEncoder().encode(
      '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="#1d4ed8"/></svg>',
    ),
  });
  const pki = testPki();
  await admin.certificates.uploadCertificate({
    workspaceId,
    name: 'Signing certificate',
    pkcs12: pkcs12(pki.signer, [pki.ca], 'layout secret'),
    password: 'layout secret',
  });

  // One generation rendered for real, and its webhook delivery.
  const key = await stack.api.key(workspaceId);
  const res = await request(stack.api.baseUrl, {
    method: 'POST',
    path: '/v1/generations',
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      templateId,
      variables: { number: 'ST-2026-0042', customer: { name: 'Nordlicht' }, total: '12' },
    }),
  });
  expect(res.status, res.text).toBe(201);
  generationId = (res.body as { id: string }).id;
  await pollUntil(
    () => admin.generations.getGeneration({ id: generationId }),
    (r) => r.generation!.status === GenerationStatus.COMPLETED,
    { timeoutMs: 90_000, intervalMs: 250, description: 'generation completed' },
  );
  await pollUntil(
    () => Promise.resolve(receiver.requests.length),
    (n) => n >= 1,
    { timeoutMs: 30_000, description: 'delivery attempted' },
  );
  owner = await openPage(browser, stack.origin);
  await owner.page.goto(`${stack.origin}/`);
  await fill(owner.page, 'Email', OWNER.email);
  await fill(owner.page, 'Password', OWNER.password);
  await click(owner.page, 'Sign in', 'button');
  await owner.page.waitForSelector('aria/Overview[role="heading"]');
}, 300_000);

screenshotOnFailure('layout', () => owner);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await receiver?.close();
  await stack?.close();
});

/** Puts the cursor at the very end of a code editor (Ctrl+End). */
async function cursorToEnd(page: Page, editor: ElementHandle): Promise<void> {
  await editor.focus();
  await page.keyboard.down('Control');
  await page.keyboard.press('End');
  await page.keyboard.up('Control');
}

/** The template body editor's text, line by line. */
function bodyText(page: Page): Promise<string> {
  return page.$eval('[aria-label="Template body"]', (el) =>
    Array.from(el.querySelectorAll('.cm-line'))
      .map((line) => line.textContent ?? '')
      .join('\n'),
  );
}

/**
 * Holds every request to one admin RPC until `release()`: its answer then arrives after
 * whatever the test does meanwhile. `stop()` ends the interception.
 */
async function holdRpc(page: Page, rpc: string): Promise<{ release: () => void; stop: () => Promise<void> }> {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  await page.setRequestInterception(true);
  const hold = (req: HTTPRequest) => {
    if (req.isInterceptResolutionHandled()) return;
    if (req.url().endsWith(`/${rpc}`)) void held.then(() => req.continue());
    else void req.continue();
  };
  page.on('request', hold);
  return {
    release: () => release(),
    stop: async () => {
      page.off('request', hold);
      await page.setRequestInterception(false);
    },
  };
}

/** How far the page scrolls sideways (0: not at all), and the widest elements if it does. */
function sidewaysScroll(page: Page): Promise<{ overflow: number; culprits: string[] }> {
  return page.evaluate(() => {
    const root = document.scrollingElement!;
    const overflow = root.scrollWidth - root.clientWidth;
    const culprits =
      overflow <= 0
        ? []
        : Array.from(document.querySelectorAll('body *'))
            .filter((el) => el.getBoundingClientRect().right > root.clientWidth + 1)
            .slice(0, 8)
            .map(
              (el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)})`,
            );
    return { overflow, culprits };
  });
}

/** At this width: axe-core (via checkScreen) and no sideways scrolling. */
async function checkAt(watched: WatchedPage, name: string, width: number): Promise<void> {
  const { overflow, culprits } = await sidewaysScroll(watched.page);
  expect(
    overflow,
    `${name} at ${width} px scrolls sideways by ${overflow} px: ${culprits.join(', ')}`,
  ).toBeLessThanOrEqual(0);
  // A table wider than its box scrolls there: a named region that takes the focus.
  const boxes = await watched.page.$$eval('.table-scroll', (els) =>
    els
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => ({
        role: el.getAttribute('role'),
        label: el.getAttribute('aria-label'),
        tabIndex: (el as HTMLElement).tabIndex,
      })),
  );
  for (const box of boxes) expect(box, `${name} at ${width} px`).toMatchObject({ role: 'region', tabIndex: 0 });
  for (const box of boxes) expect(box.label, `${name} at ${width} px`).toMatch(/\(scrolls sideways\)$/);
  if (name === 'api-keys' && width === 800) expect(boxes.map((b) => b.label)).toEqual(['API keys (scrolls sideways)']);
  await checkScreen(watched, `layout-${name}-${width}`);
}

interface Screen {
  name: string;
  path: () => string;
  /** Text on the screen once it has loaded. */
  ready: () => string;
  /** Anything further to wait for. */
  settle?: (page: Page) => Promise<void>;
}

const SCREENS: Screen[] = [
  { name: 'overview', path: () => '/overview', ready: () => 'Invitations waiting for you' },
  { name: 'templates', path: () => '/templates', ready: () => TEMPLATE_NAME },
  {
    name: 'editor',
    path: () => `/templates/${templateId}`,
    ready: () => 'Version history',
    settle: (page) => page.waitForSelector('.pdf-page canvas', { visible: true, timeout: 60_000 }).then(() => {}),
  },
  {
    name: 'new-template',
    path: () => '/templates/new',
    ready: () => 'Start from:',
  },
  {
    name: 'compare',
    path: () => `/templates/${templateId}/compare?a=1&b=2`,
    ready: () => 'Amount due',
    settle: async (page) => {
      await page.waitForSelector('.cm-mergeView', { timeout: 30_000 });
      await page.waitForFunction(() => document.querySelectorAll('.pdf-page canvas').length >= 2, { timeout: 60_000 });
    },
  },
  { name: 'generations', path: () => '/generations', ready: () => generationId },
  { name: 'generation-detail', path: () => `/generations/${generationId}`, ready: () => 'Render again' },
  { name: 'assets', path: () => '/assets', ready: () => 'company-logo-with-a-long-file-name.svg' },
  { name: 'certificates', path: () => '/certificates', ready: () => 'Nordlicht Software GmbH Signer' },
  { name: 'api-keys', path: () => '/api-keys', ready: () => 'generations:trigger' },
  { name: 'webhooks', path: () => '/webhooks', ready: () => receiver.url },
  { name: 'deliveries', path: () => '/deliveries', ready: () => 'generation.completed' },
  { name: 'members', path: () => '/members', ready: () => INVITEE },
  {
    name: 'audit',
    path: () => '/audit',
    ready: () => 'Audit log',
    settle: (page) => page.waitForSelector('main table, main .empty', { timeout: 30_000 }).then(() => {}),
  },
];

describe('portal layout at 800 px and 1440 px', () => {
  it('sign-in and invitation screens: no serious axe violation, no sideways scrolling', async () => {
    const visitor = await openPage(await browser.createBrowserContext(), stack.origin);
    for (const width of WIDTHS) {
      await visitor.page.setViewport({ width, height: 900 });
      await visitor.page.goto(`${stack.origin}/`);
      await visitor.page.waitForSelector('aria/Sign in[role="button"]');
      await checkAt(visitor, 'sign-in', width);
      await visitor.page.goto(stack.origin + invitationPath);
      await visitor.page.waitForSelector('aria/New password');
      await checkAt(visitor, 'invitation', width);
    }
    await visitor.page.close();
  });

  it('every screen of a member: no serious axe violation, no sideways scrolling', async () => {
    const { page } = owner;
    for (const width of WIDTHS) {
      await page.setViewport({ width, height: 900 });
      for (const screen of SCREENS) {
        await page.goto(stack.origin + screen.path());
        await waitForText(page, screen.ready(), 30_000);
        await screen.settle?.(page);
        await checkAt(owner, screen.name, width);
      }
    }
    mkdirSync(DOCS_IMAGES, { recursive: true });
    copyFileSync(join(SCREENSHOT_DIR, 'layout-editor-800.png'), join(DOCS_IMAGES, 'portal-editor-800.png'));
    copyFileSync(join(SCREENSHOT_DIR, 'layout-compare-1440.png'), join(DOCS_IMAGES, 'portal-compare-1440.png'));
  }, 300_000);

  it('the sticky Save/Publish bar never covers the control that has the focus', async () => {
    const { page } = owner;
    for (const width of WIDTHS) {
      await page.setViewport({ width, height: 700 });
      await page.goto(`${stack.origin}/templates/${templateId}`);
      await waitForText(page, 'Version history');
      // Every focusable control above the bar, reached with Tab from the one before it (the
      // page scrolled to the top each time): the browser scrolls it into view wholly above the bar.
      await page.bringToFront();
      const count = await page.evaluate(() => {
        const bar = document.querySelector('.sticky-actions')!;
        const focusable = Array.from(
          document
            .querySelector('.editor-fields')!
            .querySelectorAll<HTMLElement>('a[href], button, input, select, summary, [contenteditable="true"]'),
        ).filter((el) => !bar.contains(el) && el.offsetParent !== null && !(el as HTMLButtonElement).disabled);
        focusable.forEach((el, i) => el.setAttribute('data-layout-focus', String(i)));
        return focusable.length;
      });
      const problems: string[] = [];
      for (let i = Math.max(1, count - 12); i < count; i++) {
        await page.evaluate((before) => {
          window.scrollTo(0, 0);
          document.querySelector<HTMLElement>(`[data-layout-focus="${before}"]`)!.focus({ preventScroll: true });
        }, i - 1);
        await page.keyboard.press('Tab');
        await new Promise((resolve) => setTimeout(resolve, 50));
        const seen = await page.evaluate(() => {
          const el = document.activeElement as HTMLElement;
          const box = el.getBoundingClientRect();
          const bar = document.querySelector('.sticky-actions')!.getBoundingClientRect();
          return {
            name: `${el.tagName} ${el.getAttribute('aria-label') ?? el.textContent?.slice(0, 30) ?? ''}`,
            covered: box.bottom > bar.top + 0.5 && box.top < bar.bottom,
            offScreen: box.top < 0 || box.bottom > window.innerHeight,
            where: `${Math.round(box.top)}-${Math.round(box.bottom)}, bar ${Math.round(bar.top)}-${Math.round(bar.bottom)}`,
          };
        });
        if (seen.covered || seen.offScreen) problems.push(`${seen.name}: ${seen.where}`);
      }
      const covered = { count, problems };
      expect(covered.count).toBeGreaterThan(5);
      expect(covered.problems, `at ${width} px`).toEqual([]);

      // Typing on at the end of the body: the editor keeps the cursor in view, above the bar.
      const body = await page.waitForSelector('aria/Template body', { visible: true });
      await body!.focus();
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      for (let i = 0; i < 30; i++) {
        await page.keyboard.press('Enter');
        await page.keyboard.sendCharacter(`<p>line ${i}</p>`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      const cursor = await page.evaluate(() => {
        const line = document.querySelector('[aria-label="Template body"] .cm-activeLine')!.getBoundingClientRect();
        const bar = document.querySelector('.sticky-actions')!.getBoundingClientRect();
        return { lineBottom: line.bottom, barTop: bar.top };
      });
      expect(cursor.lineBottom, `the line being typed at ${width} px`).toBeLessThanOrEqual(cursor.barTop);
      // The line a problem's link leads to is shown above the bar too.
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.keyboard.down('Control');
      await page.keyboard.press('End');
      await page.keyboard.up('Control');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const end = await page.evaluate(() => {
        const line = document.querySelector('[aria-label="Template body"] .cm-activeLine')!.getBoundingClientRect();
        const bar = document.querySelector('.sticky-actions')!.getBoundingClientRect();
        return { lineBottom: line.bottom, barTop: bar.top };
      });
      expect(end.lineBottom, `the last line after Ctrl+End at ${width} px`).toBeLessThanOrEqual(end.barTop);
      // Leave without keeping the typing (the next round starts from the saved version).
      await page.evaluate(() => {
        for (const key of Object.keys(localStorage)) if (key.startsWith('docgen.draft:')) localStorage.removeItem(key);
      });
      page.once('dialog', (dialog) => void dialog.accept());
    }
  });

  it('keeps keystrokes typed while a save is on its way, as unsaved changes on the saved version', async () => {
    const { page } = owner;
    await page.setViewport({ width: 1440, height: 900 });
    const created = await stack.api.admin.templates.createTemplate({
      workspaceId,
      name: 'Race letter',
      content: { body: '<p>Dear reader</p>' },
      publish: false,
    });
    const id = created.template!.id;
    await page.goto(`${stack.origin}/templates/${id}`);
    await waitForText(page, 'based on version 1');
    const body = await page.waitForSelector('aria/Template body', { visible: true });
    const toEnd = () => cursorToEnd(page, body!);
    await toEnd();
    await page.keyboard.type('<p>saved</p>');

    // The save's request is held until more has been typed: its answer arrives after the keystrokes.
    const { release, stop } = await holdRpc(page, 'CreateTemplateVersion');
    try {
      await click(page, 'Save version', 'button');
      await toEnd();
      await page.keyboard.type('<p>typed after Save</p>');
      release();
      await waitForText(page, 'Saved as version 2');
      await waitForText(page, 'based on version 2');
      // More right after the answer, while the saved version is being fetched as the new base.
      await toEnd();
      await page.keyboard.type('<p>and more</p>');
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      await stop();
    }
    const text = await bodyText(page);
    expect(text).toBe('<p>Dear reader</p><p>saved</p><p>typed after Save</p><p>and more</p>');
    const saved = await stack.api.admin.templates.getTemplateVersion({ templateId: id, version: 2 });
    expect(saved.version!.content!.body).toBe('<p>Dear reader</p><p>saved</p>');
    // The later keystrokes are unsaved changes on version 2: Save is on offer, and a reload keeps them.
    const save = await page.waitForSelector('aria/Save version[role="button"]');
    expect(await save!.evaluate((el) => (el as HTMLButtonElement).disabled)).toBe(false);
    // The browser asks before leaving unsaved changes (beforeunload); leave, they are kept.
    const leave = (dialog: Dialog) => void dialog.accept();
    page.once('dialog', leave);
    await page.reload();
    await waitForText(page, 'were restored');
    await waitForText(page, 'based on version 2');
    expect(await bodyText(page)).toBe('<p>Dear reader</p><p>saved</p><p>typed after Save</p><p>and more</p>');
    await click(page, 'Discard changes', 'button');
  });
  it('carries keystrokes typed while a new template is being created to its page, as unsaved changes', async () => {
    const { page } = owner;
    await page.setViewport({ width: 1440, height: 900 });
    await page.goto(`${stack.origin}/templates/new`);
    await fill(page, 'Template name', 'Race memo');
    const body = await page.waitForSelector('aria/Template body', { visible: true });
    const toEnd = () => cursorToEnd(page, body!);
    await toEnd();
    await page.keyboard.type('<p>first</p>');
    const { release, stop } = await holdRpc(page, 'CreateTemplate');
    let typed: string;
    try {
      await click(page, 'Save draft', 'button');
      await toEnd();
      await page.keyboard.type('<p>second</p>');
      typed = await bodyText(page);
      release();
      await page.waitForFunction(() => /\/templates\/tpl_/.test(location.pathname), { timeout: 20_000 });
    } finally {
      await stop();
    }
    await waitForText(page, 'Created the template as version 1.');
    await waitForText(page, 'were restored');
    const id = page.url().split('/templates/')[1]!;
    const saved = await stack.api.admin.templates.getTemplateVersion({ templateId: id, version: 1 });
    expect(typed).toContain('<p>second</p>');
    expect(saved.version!.content!.body).toBe(typed.replace('<p>second</p>', ''));
    await page.waitForFunction(
      (want) =>
        Array.from(document.querySelectorAll('[aria-label="Template body"] .cm-line'))
          .map((line) => line.textContent ?? '')
          .join('\n') === want,
      { timeout: 10_000 },
      typed,
    );
    await click(page, 'Discard changes', 'button');
  });
});
