/// <reference lib="dom" />
// The template editor as an author meets it (issue #31), in real Chromium against a
// docgen-dev-like stack: typing Liquid and HTML key by key gives exactly the typed text,
// completions offer declared variables, nested paths, loop variables and docgen's filters, a
// new template starts blank, the preview says when it is out of date and counts pages, unsaved
// work is neither lost on a reload nor left without asking, and save and publish messages show
// at the top of the editor.
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { pollUntil } from '../harness/poll-until.ts';
import {
  SCREENSHOT_DIR,
  checkScreen,
  click,
  fill,
  launchBrowser,
  openPage,
  regionText,
  startPortalStack,
  waitForText,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

let stack: PortalStack;
let browser: Browser;
let workspaceId: string;
let author: WatchedPage;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startPortalStack(), launchBrowser()]);
  workspaceId = await stack.api.workspace('Editor Works');
  author = await openPage(browser, stack.origin);
  const { page } = author;
  await page.goto(stack.origin + (await stack.invite(workspaceId, 'ada.author@example.com', MemberRole.EDITOR)));
  await fill(page, 'Your name', 'Ada Author');
  await fill(page, 'New password', 'correct horse battery staple');
  await fill(page, 'Repeat password', 'correct horse battery staple');
  await click(page, 'Set password', 'button');
  await page.waitForSelector('aria/Templates[role="heading"]');
}, 180_000);

afterEach(async (ctx) => {
  if (ctx.task.result?.state === 'fail' && author) {
    await author.page
      .screenshot({
        path: join(SCREENSHOT_DIR, `failed-editor-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}.png`),
      })
      .catch(() => {});
    console.log(`page problems: ${JSON.stringify(author.problems)}; url ${author.page.url()}`);
  }
});

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stack?.close();
});

/** The text of the CodeMirror editor with this accessible name, line by line. */
function editorText(page: Page, label: string): Promise<string> {
  return page.$eval(`[aria-label="${label}"]`, (el) =>
    Array.from(el.querySelectorAll('.cm-line'))
      .map((line) => line.textContent ?? '')
      .join('\n'),
  );
}

/** Focuses the editor and removes all its text. */
async function clearEditor(page: Page, label: string): Promise<void> {
  const editor = await page.waitForSelector(`aria/${label}`, { visible: true });
  await editor!.click();
  await page.keyboard.down('Control');
  await page.keyboard.press('a');
  await page.keyboard.up('Control');
  await page.keyboard.press('Backspace');
  await editor!.dispose();
  expect(await editorText(page, label)).toBe('');
}

/** The labels of the completions on offer. */
async function completions(page: Page): Promise<string[]> {
  await page.waitForSelector('.cm-tooltip-autocomplete [role="option"]', { timeout: 10_000 });
  return page.$$eval('.cm-tooltip-autocomplete [role="option"] .cm-completionLabel', (els) =>
    els.map((e) => e.textContent ?? ''),
  );
}

const previewCount = (page: Page) =>
  page.$eval('[aria-label="Preview"]', (el) => Number(el.getAttribute('data-preview-count')));

describe('the template editor', () => {
  it('types Liquid and HTML key by key into exactly the typed text', async () => {
    const { page } = author;
    await click(page, 'New template', 'button');
    await clearEditor(page, 'Template body');
    for (const text of ['{% if name %}x{% endif %}', '<p class="a">t</p>', '{{ name }}']) {
      await clearEditor(page, 'Template body');
      await page.keyboard.type(text);
      expect(await editorText(page, 'Template body'), `typed ${text}`).toBe(text);
    }
    // A real template, several lines, nested elements and a loop.
    const template = [
      '<h1>Hello {{ customer.name }}</h1>',
      '{% for line in lines %}<p class="line"><b>{{ line.sku }}</b> {{ line.qty }}</p>{% endfor %}',
      '{% if vip %}<em>Thank you!</em>{% else %}<span>Thanks</span>{% endif %}',
    ];
    await clearEditor(page, 'Template body');
    for (const [i, line] of template.entries()) {
      await page.keyboard.type(line);
      // Escape closes a completion list left open, so Enter starts a new line.
      await page.keyboard.press('Escape');
      if (i < template.length - 1) await page.keyboard.press('Enter');
    }
    expect(await editorText(page, 'Template body')).toBe(template.join('\n'));
  });

  it('offers declared variables, nested paths, loop variables, tags and filters', async () => {
    const { page } = author;
    await clearEditor(page, 'Sample data');
    // Pasted in one go (typing JSON key by key is the JSON editor's business).
    await page.keyboard.sendCharacter(
      '{"customer": {"name": "Ada", "address": {"city": "Paris"}}, "lines": [{"sku": "A-1"}]}',
    );
    await clearEditor(page, 'Template body');
    await page.keyboard.type('{{ ');
    expect(await completions(page)).toEqual(expect.arrayContaining(['customer', 'lines']));
    await page.keyboard.type('customer.');
    expect(await completions(page)).toEqual(expect.arrayContaining(['name', 'address']));
    await page.keyboard.type('address.');
    expect(await completions(page)).toEqual(['city']);
    await page.keyboard.type('city | ');
    const filters = await completions(page);
    for (const name of ['money', 'number', 'percent', 'format_date', 'qr_code', 'barcode', 'epc_qr', 'chart', 'upcase'])
      expect(filters).toContain(name);
    await page.keyboard.press('Escape');
    await page.keyboard.type('upcase }}');
    await page.keyboard.press('Enter');
    await page.keyboard.type('{% for line in lines %}{{ line.');
    expect(await completions(page)).toEqual(['sku']);
    await page.keyboard.press('Escape');
    await page.keyboard.type('sku }}{% endfor %}');
    await page.keyboard.press('Enter');
    await page.keyboard.type('{% ');
    expect(await completions(page)).toEqual(expect.arrayContaining(['if', 'for', 'render', 'assign']));
    await page.keyboard.type('if');
    await page.waitForSelector('aria/if[role="option"]');
    await page.keyboard.press('Enter');
    // The snippet: `{% if condition %}`, an empty line, `{% endif %}`, with "condition" selected.
    await page.keyboard.type('customer');
    expect((await editorText(page, 'Template body')).split('\n').slice(2)).toEqual([
      '{% if customer %}',
      '  ',
      '{% endif %}',
    ]);
    await checkScreen(author, 'template-editor-completions');
  });
});
