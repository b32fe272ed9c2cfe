/// <reference lib="dom" />
// Shared set-up of the portal's browser tests: a docgen-dev-like stack (all roles in one
// process on loopback, real nats-server, the MongoDB stand-in, s3rver, Chromium), operator
// clients on the admin port, and a real Chromium driven by puppeteer with helpers that
// check every screen: axe-core (no serious or critical violation), no request to another
// origin, no Content-Security-Policy violation, and a screenshot in test-output/screenshots.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer';
import { afterEach, expect } from 'vitest';
import { UserService, MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { WebhookEndpointService } from '../../src/gen/docgen/admin/v1/webhook_endpoint_pb.js';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { startApiStack, type ApiStack } from './api-stack.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-output', 'screenshots');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface PortalStack {
  api: ApiStack;
  /** The portal's origin: the admin listener. */
  origin: string;
  users: Client<typeof UserService>;
  webhooks: Client<typeof WebhookEndpointService>;
  /** Invites a person (operator call) and returns the path of their invitation link ('' when none was issued). */
  invite(workspaceId: string, email: string, role: MemberRole): Promise<string>;
  close(): Promise<void>;
}

export async function startPortalStack(): Promise<PortalStack> {
  const api = await startApiStack({
    env: {
      DOCGEN_ROLES: 'api,render,webhooks',
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_RENDER_CONCURRENCY: '1',
    },
  });
  const origin = `http://127.0.0.1:${api.app.adminPort}`;
  const transport = createConnectTransport({
    baseUrl: origin,
    httpVersion: '1.1',
    interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${api.deps.adminToken}`), next(req))],
  });
  const users = createClient(UserService, transport);
  return {
    api,
    origin,
    users,
    webhooks: createClient(WebhookEndpointService, transport),
    async invite(workspaceId, email, role) {
      const res = await users.inviteUser({ workspaceId, email, role });
      // A person who already has a password gets the membership and no link.
      return res.inviteUrl ? new URL(res.inviteUrl).pathname : '';
    },
    close: () => api.close(),
  };
}

export async function launchBrowser(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: process.env.DOCGEN_CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    userDataDir: uniqueRunDir('portal-chromium'),
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

export interface WatchedPage {
  page: Page;
  /** Requests to anything but the portal's origin (data: and blob: aside). */
  foreignRequests: string[];
  /** Console messages about the Content-Security-Policy, and uncaught page errors. */
  problems: string[];
}

/**
 * After each test of the calling file: when it failed, a screenshot of the page `watched()`
 * names, `test-output/screenshots/failed-<prefix>-<test>.png`, and the page's problems and URL
 * on the console.
 */
export function screenshotOnFailure(prefix: string, watched: () => WatchedPage | undefined): void {
  afterEach(async (ctx) => {
    const w = watched();
    if (ctx.task.result?.state !== 'fail' || !w) return;
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const name = ctx.task.name.slice(0, 40).replace(/\W+/g, '-');
    await w.page.screenshot({ path: join(SCREENSHOT_DIR, `failed-${prefix}-${name}.png`) }).catch(() => {});
    console.log(`page problems: ${JSON.stringify(w.problems)}; url ${w.page.url()}`);
  });
}

export async function openPage(context: Browser | BrowserContext, origin: string, width = 1280): Promise<WatchedPage> {
  const page = await context.newPage();
  await page.setViewport({ width, height: 900 });
  const watched: WatchedPage = { page, foreignRequests: [], problems: [] };
  page.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:'))
      watched.foreignRequests.push(url);
  });
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) watched.problems.push(`CSP: ${msg.text()}`);
  });
  page.on('pageerror', (err) => watched.problems.push(`page error: ${String(err)}`));
  return watched;
}

/** axe-core on the current screen: no serious or critical violation; then a screenshot. */
export async function checkScreen(watched: WatchedPage, name: string): Promise<void> {
  const { page } = watched;
  // DevTools evaluation is not subject to the page's CSP, so axe needs no exception in it.
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run(
            ctx: Document,
            opts: object,
          ): Promise<{
            violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe.run(document, {
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
    }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: false });
  expect(serious, `axe on ${name}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
  expect(watched.foreignRequests, `requests to other origins on ${name}`).toEqual([]);
  expect(watched.problems, `CSP violations or page errors on ${name}`).toEqual([]);
}

/**
 * Clicks the element found by accessible name (and role), e.g. click(page, 'Sign in', 'button'),
 * as a person does: scrolled into view, once it stays where it is. Scrolling can move it: the
 * template editor measures the lines it scrolls to (CodeMirror estimates the others), and the
 * sections below it move by the difference; a click aimed before that lands on the one above.
 */
export async function click(page: Page, name: string, role?: string): Promise<void> {
  const selector = role ? `aria/${name}[role="${role}"]` : `aria/${name}`;
  const handle = await page.waitForSelector(selector, { visible: true, timeout: 15_000 });
  await handle!.scrollIntoView();
  await handle!.evaluate(
    (el) =>
      new Promise<void>((resolve) => {
        // Still for three frames in a row (at most a second).
        let last = '';
        let still = 0;
        const started = performance.now();
        const look = () => {
          const r = el.getBoundingClientRect();
          const now = `${r.top},${r.left},${r.width},${r.height}`;
          still = now === last ? still + 1 : 0;
          last = now;
          if (still >= 3 || performance.now() - started > 1_000) resolve();
          else requestAnimationFrame(look);
        };
        requestAnimationFrame(look);
      }),
  );
  await handle!.click();
  await handle!.dispose();
}

/** Types into the field found by accessible name, replacing what it holds. */
export async function fill(page: Page, name: string, text: string): Promise<void> {
  const handle = await page.waitForSelector(`aria/${name}`, { visible: true, timeout: 15_000 });
  await handle!.click({ count: 3 });
  await page.keyboard.press('Backspace');
  await handle!.type(text);
  await handle!.dispose();
}

/**
 * On an invitation link's page: sets the password (and the name, when given) as the invited
 * person would, and waits for the portal's first screen (Templates) signed in.
 */
export async function setPasswordFromInvitation(
  page: Page,
  person: { password: string; name?: string },
): Promise<void> {
  if (person.name !== undefined) await fill(page, 'Your name', person.name);
  await fill(page, 'New password', person.password);
  await fill(page, 'Repeat password', person.password);
  await click(page, 'Set password', 'button');
  await page.waitForSelector('aria/Templates[role="heading"]', { timeout: 20_000 });
}

/**
 * Invites `person` into the workspace with the role, opens the invitation on `page` and sets
 * the password (and the name, when given): the page ends signed in on Templates.
 */
export async function acceptInvitation(
  stack: PortalStack,
  page: Page,
  workspaceId: string,
  person: { email: string; role: MemberRole; password: string; name?: string },
): Promise<void> {
  await page.goto(stack.origin + (await stack.invite(workspaceId, person.email, person.role)));
  await setPasswordFromInvitation(page, person);
}

/** The visible text of the region with this accessible name. */
export async function regionText(page: Page, name: string): Promise<string> {
  const handle = await page.waitForSelector(`aria/${name}[role="region"]`, { timeout: 15_000 });
  const text = await handle!.evaluate((el) => (el as HTMLElement).innerText || el.textContent || '');
  await handle!.dispose();
  return text;
}

/** Waits until the page's text contains `text` (polling the DOM). */
export async function waitForText(page: Page, text: string, timeoutMs = 20_000): Promise<void> {
  await page.waitForFunction((t) => document.body.innerText.includes(t), { timeout: timeoutMs, polling: 100 }, text);
}
