/// <reference lib="dom" />
// The portal in real Chromium (issue #31): the invitation page names the address the link is
// for (and nothing for a link that does not work); the audit log tells who did what in words,
// with the person's name and email and the template as a link, and its filters by person and
// action narrow it on the server; a member's role change asks first, and Cancel keeps the old
// role. Every screen passes axe-core (no serious or critical violation).
import type { Browser, ElementHandle, Page } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { startApiStack, type ApiStack } from './api-stack.ts';
import {
  checkScreen,
  click,
  launchBrowser,
  openPage,
  setPasswordFromInvitation,
  waitForText,
  type WatchedPage,
} from './portal-stack.ts';

let stack: ApiStack;
let browser: Browser;
let origin: string;
let ws: string;
let ownerLink: string;
let templateId: string;
let eddieId: string;
const OWNER = { email: 'olivia.owner@audit.example', name: 'Olivia Owner', password: 'olivia keeps the audit log' };
const EDDIE = { email: 'eddie.editor@audit.example', name: 'Eddie Editor', password: 'eddie edits invoices daily' };

/** An admin RPC as the portal sends it, with a session cookie. */
async function rpc(path: string, body: unknown, cookie = ''): Promise<Response> {
  return fetch(`${origin}/docgen.admin.v1.${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([startApiStack(), launchBrowser()]);
  origin = `http://127.0.0.1:${stack.app.adminPort}`;
  ws = await stack.workspace('Audit workspace');
  const owner = await stack.admin.users.inviteUser({ workspaceId: ws, email: OWNER.email, role: MemberRole.OWNER });
  ownerLink = new URL(owner.inviteUrl).pathname;
  // Eddie sets his password with his link and, signed in, makes and publishes a template.
  const eddie = await stack.admin.users.inviteUser({ workspaceId: ws, email: EDDIE.email, role: MemberRole.EDITOR });
  eddieId = eddie.user!.id;
  const accepted = await rpc('SessionService/AcceptInvitation', {
    token: new URL(eddie.inviteUrl).pathname.slice('/invite/'.length),
    password: EDDIE.password,
    displayName: EDDIE.name,
  });
  expect(accepted.status).toBe(200);
  const cookie = accepted.headers.get('set-cookie')!.split(';')[0]!;
  const created = await rpc(
    'TemplateService/CreateTemplate',
    { workspaceId: ws, name: 'Invoice', content: { body: '<p>{{ name }}</p>', variables: [{ name: 'name' }] } },
    cookie,
  );
  expect(created.status, await created.clone().text()).toBe(200);
  templateId = ((await created.json()) as { template: { id: string } }).template.id;
  const published = await rpc('TemplateService/PublishTemplateVersion', { templateId, version: 1 }, cookie);
  expect(published.status, await published.clone().text()).toBe(200);
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stack?.close();
});

/** The text of each row of the audit log's table. */
async function auditRows(page: Page): Promise<string[]> {
  return page.$$eval('table.audit-log tbody tr', (rows) => rows.map((r) => (r as HTMLElement).innerText));
}

async function selectByName(page: Page, name: string, value: string): Promise<void> {
  const handle = (await page.waitForSelector(`aria/${name}[role="combobox"]`, {
    visible: true,
  })) as ElementHandle<HTMLSelectElement>;
  await handle.select(value);
  await handle.dispose();
}

describe('issue #31 in the portal', () => {
  let owner: WatchedPage;

  it('the invitation page names the address the link is for; a broken link names nobody', async () => {
    const stranger = await openPage(await browser.createBrowserContext(), origin);
    await stranger.page.goto(`${origin}/invite/${'x'.repeat(43)}`);
    await stranger.page.waitForSelector('aria/Invitation link not valid[role="heading"]');
    await waitForText(stranger.page, 'invalid, expired or already used');
    expect(await stranger.page.evaluate(() => document.body.innerText)).not.toContain('@');
    await checkScreen(stranger, 'invitation-not-valid');

    owner = await openPage(await browser.createBrowserContext(), origin);
    await owner.page.goto(`${origin}${ownerLink}`);
    await owner.page.waitForSelector('aria/Accept your invitation[role="heading"]');
    await waitForText(owner.page, `This invitation is for ${OWNER.email}`);
    const shown = await owner.page.$eval('aria/Email', (el) => (el as HTMLInputElement).value);
    expect(shown).toBe(OWNER.email);
    await checkScreen(owner, 'invitation-email');
    await setPasswordFromInvitation(owner.page, { password: OWNER.password, name: OWNER.name });
  });

  it('the audit log says "published version 1 of Invoice" with the person and a link, and filters narrow it', async () => {
    const { page } = owner;
    await click(page, 'Audit log', 'link');
    await waitForText(page, 'published version 1 of Invoice');
    const rows = await auditRows(page);
    const publish = rows.find((r) => r.includes('published version 1 of Invoice'))!;
    expect(publish).toContain(EDDIE.name);
    expect(publish).toContain(EDDIE.email);
    expect(
      rows.some((r) => r.includes('The operator (admin token)') && r.includes(`invited ${EDDIE.email} as editor`)),
    ).toBe(true);
    expect(rows.join('\n')).not.toMatch(/usr_|Service\.|templates\.publish/);
    const link = await page.waitForSelector('aria/Invoice[role="link"]');
    expect(await link!.evaluate((a) => (a as HTMLAnchorElement).getAttribute('href'))).toBe(`/templates/${templateId}`);
    await link!.dispose();
    await checkScreen(owner, 'audit-log');

    // By person: only Eddie's events (created, published), on the server.
    await selectByName(page, 'Person', eddieId);
    await page.waitForFunction(
      (name) => {
        const rows = Array.from(document.querySelectorAll('table.audit-log tbody tr')).map(
          (r) => (r as HTMLElement).innerText,
        );
        return rows.length > 0 && rows.every((r) => r.includes(name));
      },
      { timeout: 20_000 },
      EDDIE.name,
    );
    const eddies = await auditRows(page);
    expect(eddies.length).toBeLessThan(rows.length);
    expect(eddies.some((r) => r.includes('created the template Invoice'))).toBe(true);
    // And by action: only the publication.
    await selectByName(page, 'Action', 'templates.publish');
    await page.waitForFunction(() => document.querySelectorAll('table.audit-log tbody tr').length === 1, {
      timeout: 20_000,
    });
    expect((await auditRows(page))[0]).toContain('published version 1 of Invoice');
    await checkScreen(owner, 'audit-log-filtered');
    // An action nobody did: said so.
    await selectByName(page, 'Action', 'apiKeys.revoke');
    await waitForText(page, 'No event matches these filters.');
    await selectByName(page, 'Action', '');
    await selectByName(page, 'Person', '');
    // A time range that ends before anything happened: nothing either.
    const to = await page.waitForSelector('aria/To');
    await to!.evaluate((el) => {
      const input = el as HTMLInputElement;
      input.value = '2020-01-01';
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await to!.dispose();
    await waitForText(page, 'No event matches these filters.');
    await click(page, 'Clear filters', 'button');
    await waitForText(page, `invited ${EDDIE.email} as editor`);
  });

  it('a role change asks first, naming the person and the role; Cancel keeps the old one; the keyboard confirms', async () => {
    const { page } = owner;
    await click(page, 'Members', 'link');
    const roleOf = `Role of ${EDDIE.email}`;
    await selectByName(page, roleOf, String(MemberRole.VIEWER));
    const question = `Change the role of ${EDDIE.name} (${EDDIE.email}) to Viewer?`;
    await page.waitForSelector(`aria/${question}[role="dialog"]`, { visible: true });
    await waitForText(page, 'A viewer reads only.');
    await checkScreen(owner, 'members-role-confirm');
    await click(page, 'Cancel', 'button');
    await page.waitForSelector('dialog[open]', { hidden: true });
    const selected = () => page.$eval(`aria/${roleOf}`, (el) => (el as HTMLSelectElement).value);
    expect(await selected()).toBe(String(MemberRole.EDITOR));
    const members = await stack.admin.members.listMembers({ workspaceId: ws });
    expect(members.members.find((m) => m.user?.id === eddieId)?.role).toBe(MemberRole.EDITOR);
    // The focus is back on the list.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(roleOf);

    // Escape cancels too.
    await selectByName(page, roleOf, String(MemberRole.OWNER));
    await page.waitForSelector(`aria/Change the role of ${EDDIE.name} (${EDDIE.email}) to Owner?[role="dialog"]`, {
      visible: true,
    });
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog[open]', { hidden: true });
    expect(await selected()).toBe(String(MemberRole.EDITOR));

    // Again, confirmed with the keyboard: the dialog's first button has the focus.
    await selectByName(page, roleOf, String(MemberRole.VIEWER));
    await page.waitForSelector(`aria/${question}[role="dialog"]`, { visible: true });
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Change role');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]', { hidden: true });
    for (let i = 0; i < 50; i++) {
      const now = await stack.admin.members.listMembers({ workspaceId: ws });
      if (now.members.find((m) => m.user?.id === eddieId)?.role === MemberRole.VIEWER) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const after = await stack.admin.members.listMembers({ workspaceId: ws });
    expect(after.members.find((m) => m.user?.id === eddieId)?.role).toBe(MemberRole.VIEWER);
    expect(await selected()).toBe(String(MemberRole.VIEWER));
    await click(page, 'Audit log', 'link');
    await waitForText(page, `changed the role of ${EDDIE.email} to viewer`);
  });
});
