/// <reference lib="dom" />
// The portal in real Chromium: an owner invites someone who already has an account and gets
// no link, only a notice; that person, signed in, sees the invitation and accepts it with the
// keyboard alone, and the workspace is theirs to switch to. Every screen passes axe-core.
import type { Browser } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { startApiStack, type ApiStack } from './api-stack.ts';
import { checkScreen, click, fill, launchBrowser, openPage, waitForText } from './portal-stack.ts';

let stack: ApiStack;
let browser: Browser;
let origin: string;
let wsA: string;
let wsB: string;
const OWNER = { email: 'otto.owner@a.example', password: 'otto owns workspace a' };
const ALICE = { email: 'alice@b.example', password: 'alice belongs to b first' };

/** An operator invitation, accepted with the link: the person has an account with a password. */
async function person(workspaceId: string, email: string, password: string): Promise<void> {
  const invited = await stack.admin.users.inviteUser({ workspaceId, email, role: MemberRole.OWNER });
  const token = new URL(invited.inviteUrl).pathname.slice('/invite/'.length);
  const res = await fetch(`${origin}/docgen.admin.v1.SessionService/AcceptInvitation`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ token, password }),
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([startApiStack(), launchBrowser()]);
  origin = `http://127.0.0.1:${stack.app.adminPort}`;
  wsA = await stack.workspace('Workspace A');
  wsB = await stack.workspace('Workspace B');
  await person(wsA, OWNER.email, OWNER.password);
  await person(wsB, ALICE.email, ALICE.password);
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stack?.close();
});

async function signIn(watched: Awaited<ReturnType<typeof openPage>>, who: { email: string; password: string }) {
  await watched.page.goto(`${origin}/`);
  await fill(watched.page, 'Email', who.email);
  await fill(watched.page, 'Password', who.password);
  await click(watched.page, 'Sign in', 'button');
  // Signing in lands on the Overview.
  await watched.page.waitForSelector('aria/Overview[role="heading"]');
}

describe('pending invitations in the portal', () => {
  it('an owner inviting an existing account gets a notice and no link; the person accepts with the keyboard', async () => {
    const owner = await openPage(await browser.createBrowserContext(), origin);
    await signIn(owner, OWNER);
    await click(owner.page, 'Members', 'link');
    await waitForText(owner.page, OWNER.email);
    await fill(owner.page, 'Email', ALICE.email);
    await click(owner.page, 'Invite member', 'button');
    await waitForText(owner.page, 'is invited: they see the invitation once signed in');
    expect(await owner.page.$('[data-secret]')).toBeNull();
    // The offer is listed for the owners, with a way to withdraw it.
    await owner.page.waitForSelector('aria/Invited, not answered yet[role="heading"]');
    await owner.page.waitForSelector(`aria/Withdraw the invitation of ${ALICE.email}[role="button"]`);
    expect(await owner.page.evaluate(() => document.body.innerText)).not.toContain('/invite/');
    await checkScreen(owner, 'members-invitation-offered');

    const alice = await openPage(await browser.createBrowserContext(), origin);
    await signIn(alice, ALICE);
    await alice.page.waitForSelector('aria/Invitations waiting for you[role="heading"]');
    await waitForText(alice.page, 'Workspace A invites you as Editor');
    await checkScreen(alice, 'pending-invitations');
    // Keyboard only: Tab until the accept button has the focus, then Enter.
    for (let i = 0; i < 30; i++) {
      const focused = await alice.page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '');
      if (focused === 'Accept the invitation to Workspace A') break;
      await alice.page.keyboard.press('Tab');
    }
    expect(await alice.page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Accept the invitation to Workspace A',
    );
    await alice.page.keyboard.press('Enter');
    await alice.page.waitForFunction(() => !document.body.innerText.includes('Invitations waiting for you'), {
      timeout: 20_000,
    });
    // Both workspaces in the switcher now, and A (just joined) selected.
    const options = await alice.page.$$eval('select option', (els) => els.map((el) => el.textContent));
    expect(options.sort()).toEqual(['Workspace A', 'Workspace B']);
    expect(await alice.page.$eval('select', (el) => (el as HTMLSelectElement).value)).toBe(wsA);
    await checkScreen(alice, 'pending-invitation-accepted');
    expect(wsB).toMatch(/^ws_/);
  });
});
