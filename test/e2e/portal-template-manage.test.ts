/// <reference lib="dom" />
// Managing a template in the portal (issue #31 items 8 and 9), in real Chromium against a
// docgen-dev-like stack: a version saved with a note shows its author and the note in the
// history; rename; archive and unarchive as an owner; delete of a never-used template (gone from
// the list) and of a used one (archived, and the screen says why). axe-core on each screen.
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { TemplateStatus } from '../../src/gen/docgen/admin/v1/template_pb.js';
import { postJson, publishedTemplate } from './api-stack.ts';
import {
  SCREENSHOT_DIR,
  checkScreen,
  click,
  fill,
  launchBrowser,
  openPage,
  acceptInvitation,
  regionText,
  screenshotOnFailure,
  startPortalStack,
  waitForText,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

let stack: PortalStack;
let browser: Browser;
let workspaceId: string;
let owner: WatchedPage;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startPortalStack(), launchBrowser()]);
  workspaceId = await stack.api.workspace('Template Care');
  owner = await openPage(browser, stack.origin);
  await acceptInvitation(stack, owner.page, workspaceId, {
    email: 'olive.owner@example.com',
    role: MemberRole.OWNER,
    password: 'correct horse battery staple',
    name: 'Olive Owner',
  });
}, 180_000);

screenshotOnFailure('manage', () => owner);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stack?.close();
});

async function openTemplate(page: Page, id: string, name: string): Promise<void> {
  await page.goto(`${stack.origin}/templates/${id}`);
  await page.waitForSelector(`aria/${name}[role="heading"]`, { timeout: 20_000 });
}

/** Clicks the action's button, then the confirming button of its dialog. */
async function confirm(page: Page, action: string, confirmLabel: string): Promise<void> {
  await click(page, action, 'button');
  await click(page, confirmLabel, 'button');
}

describe('managing a template', () => {
  it('saves a version with a note; the history shows its author and the note', async () => {
    const { page } = owner;
    const id = await publishedTemplate(stack.api.admin, workspaceId, 'Greeting');
    await openTemplate(page, id, 'Greeting');
    const body = await page.waitForSelector('aria/Template body', { visible: true });
    await body!.click();
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    await page.keyboard.type('<p>Kind regards</p>');
    await body!.dispose();
    await fill(page, 'Version note', 'Adds the closing line');
    await click(page, 'Save version', 'button');
    await waitForText(page, 'Saved as version 2.');
    await pollText(page, 'Version history', 'Adds the closing line');
    expect(await regionText(page, 'Version history')).toContain('Adds the closing line');
    // Version, created, author, note, state: each row's cells as a reader sees them.
    const rows = await page.$$eval('section.history tbody tr', (trs) =>
      trs.map((tr) =>
        Array.from((tr as HTMLTableRowElement).cells)
          .slice(0, 5)
          .map((c) => c.innerText.replace(/\s+/g, ' ').trim()),
      ),
    );
    expect(rows.map((r) => [r[0], r[2], r[3], r[4]])).toEqual([
      ['v2', 'Olive Owner olive.owner@example.com', 'Adds the closing line', 'In the editor'],
      // Version 1 was made with the operator token (automation), without a note.
      ['v1', 'Operator (automation)', '', 'Published'],
    ]);
    // The note field is empty again for the next version.
    expect(await page.$eval('aria/Version note', (el) => (el as HTMLInputElement).value)).toBe('');
    await checkScreen(owner, 'template-manage-editor');
    const section = await page.$('section.history');
    await section!.scrollIntoView();
    await section!.screenshot({ path: join(SCREENSHOT_DIR, 'template-manage-history.png') });
    await section!.dispose();
  });

  it('renames a template, then archives and unarchives it as an owner', async () => {
    const { page } = owner;
    const id = await publishedTemplate(stack.api.admin, workspaceId, 'Letter');
    await openTemplate(page, id, 'Letter');
    await click(page, 'Rename', 'button');
    await fill(page, 'New name', 'Welcome letter');
    await click(page, 'Rename template', 'button');
    await page.waitForSelector('aria/Welcome letter[role="heading"]', { timeout: 20_000 });
    await waitForText(page, 'Renamed to “Welcome letter”.');
    expect((await stack.api.admin.templates.getTemplate({ id })).template!.name).toBe('Welcome letter');

    await confirm(page, 'Archive', 'Archive template');
    await waitForText(page, 'Archived. Generations of this template are refused from now on.');
    await page.waitForSelector('aria/Unarchive[role="button"]', { timeout: 20_000 });
    await checkScreen(owner, 'template-manage-archived');
    await click(page, 'Unarchive', 'button');
    await waitForText(page, 'Unarchived. Generations of this template are accepted again.');
    expect((await stack.api.admin.templates.getTemplate({ id })).template!.status).toBe(TemplateStatus.ACTIVE);
    await page.waitForSelector('aria/Archive[role="button"]', { timeout: 20_000 });
  });

  it('deletes a never-used template: gone from the list', async () => {
    const { page } = owner;
    const id = await publishedTemplate(stack.api.admin, workspaceId, 'Draft memo');
    await openTemplate(page, id, 'Draft memo');
    await confirm(page, 'Delete', 'Delete template');
    await page.waitForSelector('aria/Templates[role="heading"]', { timeout: 20_000 });
    await waitForText(page, 'Deleted the template “Draft memo” and its versions.');
    // The list shows active templates by default; all of them include no "Draft memo" either.
    await page.select('select', 'all');
    await waitForText(page, 'Greeting');
    expect(await page.$eval('table', (t) => (t as HTMLElement).innerText)).not.toContain('Draft memo');
    await checkScreen(owner, 'template-manage-deleted');
    await expect(stack.api.admin.templates.getTemplate({ id })).rejects.toThrow(/not found/i);
  });

  it('deleting a used template archives it and says why', async () => {
    const { page } = owner;
    const id = await publishedTemplate(stack.api.admin, workspaceId, 'Invoice');
    const key = await stack.api.key(workspaceId);
    for (let i = 0; i < 2; i++) {
      const res = await postJson(stack.api.baseUrl, key.secret, { templateId: id, variables: { name: `n${i}` } });
      expect(res.status, res.text).toBe(201);
    }
    await openTemplate(page, id, 'Invoice');
    await confirm(page, 'Delete', 'Delete template');
    await waitForText(page, 'Invoice has 2 generations, so it was archived instead of deleted.');
    await page.waitForSelector('aria/Unarchive[role="button"]', { timeout: 20_000 });
    expect((await stack.api.admin.templates.getTemplate({ id })).template!.status).toBe(TemplateStatus.ARCHIVED);
    await checkScreen(owner, 'template-manage-archived-instead');
  });
});

/** Waits until the region's text contains `text`. */
async function pollText(page: Page, region: string, text: string): Promise<void> {
  await page.waitForFunction(
    (name, t) => {
      const heading = Array.from(document.querySelectorAll('h2')).find((h) => h.textContent === name);
      return !!heading?.closest('section')?.textContent?.includes(t);
    },
    { timeout: 20_000, polling: 100 },
    region,
    text,
  );
}
