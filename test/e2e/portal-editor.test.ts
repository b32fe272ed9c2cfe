/// <reference lib="dom" />
// The template editor as an author meets it (issue #31), in real Chromium against a
// docgen-dev-like stack: typing Liquid and HTML key by key gives exactly the typed text,
// completions offer declared variables, nested paths, loop variables and docgen's filters, a
// new template starts blank, the preview says when it is out of date and counts pages, unsaved
// work is neither lost on a reload nor left without asking, and save and publish messages show
// at the top of the editor.
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberRole } from '../../src/gen/docgen/admin/v1/identity_pb.js';
import { pollUntil } from '../harness/poll-until.ts';
import {
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
let author: WatchedPage;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startPortalStack(), launchBrowser()]);
  workspaceId = await stack.api.workspace('Editor Works');
  author = await openPage(browser, stack.origin);
  await acceptInvitation(stack, author.page, workspaceId, {
    email: 'ada.author@example.com',
    role: MemberRole.EDITOR,
    password: 'correct horse battery staple',
    name: 'Ada Author',
  });
}, 180_000);

screenshotOnFailure('editor', () => author);

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

/** The labels of the completions on offer, once they include `expected` (the list follows the typing). */
async function completions(page: Page, expected: string[]): Promise<string[]> {
  return pollUntil(
    () =>
      page.$$eval('.cm-tooltip-autocomplete [role="option"] .cm-completionLabel', (els) =>
        els.map((e) => e.textContent ?? ''),
      ),
    (labels) => expected.every((l) => labels.includes(l)),
    { timeoutMs: 10_000, intervalMs: 50, description: `completions ${expected.join(', ')}` },
  );
}

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
    // Enter indents the new line as the editor sees fit: the lines are compared without it.
    const typed = (await editorText(page, 'Template body')).split('\n').map((line) => line.trimStart());
    expect(typed).toEqual(template);
  });

  it('offers declared variables, nested paths, loop variables, tags and filters', async () => {
    const { page } = author;
    await clearEditor(page, 'Sample data');
    // Pasted in one go (typing JSON key by key is the JSON editor's business).
    await page.keyboard.sendCharacter(
      '{"customer": {"name": "Ada", "address": {"city": "Paris"}}, "lines": [{"sku": "A-1"}]}',
    );
    // Declared from the suggestions of a first body, so that the sample data's names are known.
    await clearEditor(page, 'Template body');
    await page.keyboard.sendCharacter('{{ customer.name }}{% for l in lines %}{% endfor %}');
    await waitForText(page, 'does not declare: customer, lines.', 30_000);
    await click(page, 'Declare suggested variables', 'button');
    await waitForText(page, 'Declared variables (2)');
    await clearEditor(page, 'Template body');
    await page.keyboard.type('{{ ');
    await completions(page, ['customer', 'lines']);
    await page.keyboard.type('customer.');
    await completions(page, ['name', 'address']);
    await page.keyboard.type('address.');
    expect(await completions(page, ['city'])).toEqual(['city']);
    await checkScreen(author, 'template-editor-completions');
    await page.keyboard.type('city | ');
    await completions(page, [
      'money',
      'number',
      'percent',
      'format_date',
      'qr_code',
      'barcode',
      'epc_qr',
      'chart',
      'upcase',
    ]);
    await page.keyboard.press('Escape');
    await page.keyboard.type('upcase }}');
    await page.keyboard.press('Enter');
    await page.keyboard.type('{% for line in lines %}{{ line.');
    expect(await completions(page, ['sku'])).toEqual(['sku']);
    await page.keyboard.press('Escape');
    await page.keyboard.type('sku }}{% endfor %}');
    await page.keyboard.press('Enter');
    await page.keyboard.type('{% ');
    await completions(page, ['if', 'for', 'render', 'assign']);
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
  });

  it('keeps the draft over a reload, and discards it on request', async () => {
    const { page } = author;
    const before = await editorText(page, 'Template body');
    expect(before).toContain('{% if customer %}');
    // The browser asks before unloading a page with unsaved changes; the author goes ahead.
    page.on('dialog', (dialog) => void dialog.accept());
    await page.reload();
    await page.waitForSelector('aria/Template body');
    await waitForText(page, 'were restored');
    expect(await editorText(page, 'Template body')).toBe(before);
    await click(page, 'Discard changes', 'button');
    await pollUntil(
      () => editorText(page, 'Template body'),
      (text) => text.trim() === '<h1>Untitled</h1>',
      { description: 'the blank page back' },
    );
    // A blank page: no leftover declarations.
    await waitForText(page, 'Declared variables (0)');
  });

  it('renders a new template after its body is replaced; declares suggested variables as needed', async () => {
    const { page } = author;
    await fill(page, 'Template name', 'Certificate');
    await clearEditor(page, 'Template body');
    await page.keyboard.type('<h1>Certificate</h1><p>Awarded for courage');
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('Awarded for courage') && text.includes('Preview up to date'),
      { timeoutMs: 30_000, description: 'the first preview of the new body' },
    );
    await page.keyboard.press('End');
    await page.keyboard.press('Enter');
    await page.keyboard.type("<p>{{ recipient }} {{ motto | default: 'Well done' }}</p>");
    await page.keyboard.press('Escape');
    await click(page, 'Declare suggested variables', 'button');
    // The panel stays open; printed without a default is required, with a default optional.
    await page.waitForSelector('aria/recipient required', { visible: true });
    expect(await page.$eval('[aria-label="recipient required"]', (el) => (el as HTMLInputElement).checked)).toBe(true);
    expect(await page.$eval('[aria-label="motto required"]', (el) => (el as HTMLInputElement).checked)).toBe(false);
    // The required one gets a placeholder in the sample data, so the preview goes on.
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('recipient Well done') && text.includes('Preview up to date'),
      { timeoutMs: 30_000, description: 'the preview with the placeholder' },
    );
    // A required variable the sample data lacks: said in words, not "shown at their lines".
    await clearEditor(page, 'Sample data');
    await page.keyboard.sendCharacter('{}');
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => /Preview out of date: .*recipient/.test(text),
      { timeoutMs: 30_000, description: 'the missing variable in the preview pane' },
    );
    expect(await regionText(page, 'Preview')).not.toMatch(/shown at (its line|their lines)/);
    await checkScreen(author, 'template-editor-missing-variable');
    // Optional, with a default typed as plain text.
    await click(page, 'recipient required', 'checkbox');
    await fill(page, 'recipient default', 'Ada Lovelace');
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('Ada Lovelace Well done') && text.includes('Preview up to date'),
      { timeoutMs: 30_000, description: 'the preview with the default' },
    );
  });

  it('says "Preview out of date" and dims the pages on an error; counts and pages through pages', async () => {
    const { page } = author;
    const editor = await page.waitForSelector('aria/Template body');
    await editor!.click();
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    await page.keyboard.press('Enter');
    await page.keyboard.sendCharacter('{% if %}');
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('Preview out of date') && /shown at (its line|their lines)/.test(text),
      { timeoutMs: 30_000, description: 'the error in the preview pane' },
    );
    expect(await page.$('.pdf-frame.stale')).not.toBeNull();
    await checkScreen(author, 'template-editor-out-of-date');
    for (let i = 0; i < '{% if %}'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.sendCharacter('<p style="break-before: page">The second page</p>');
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('Page 1 of 2') && text.includes('Preview up to date'),
      { timeoutMs: 30_000, description: 'a two-page preview' },
    );
    expect(await page.$('.pdf-frame.stale')).toBeNull();
    await click(page, 'Next page', 'button');
    await waitForText(page, 'Page 2 of 2');
    await page.select('.preview-tools select', 'actual');
    await pollUntil(
      () => page.$eval('.pdf-page', (el) => (el as HTMLElement).offsetWidth),
      (width) => Math.abs(width - 794) <= 2,
      { description: 'an A4 page at 100 % (794 CSS px)' },
    );
    await page.select('.preview-tools select', 'fit');
  });

  it('shows save, publish and refusal messages at the top of the editor, in view', async () => {
    const { page } = author;
    const inView = (text: string) =>
      page.evaluate((t) => {
        const el = Array.from(document.querySelectorAll('.editor-messages [role]')).find((e) =>
          e.textContent?.includes(t),
        );
        if (!el) return false;
        const r = el.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight;
      }, text);
    await click(page, 'Save draft', 'button');
    await page.waitForFunction(() => /\/templates\/tpl_/.test(location.pathname), { timeout: 20_000 });
    await waitForText(page, 'Created the template as version 1.');
    expect(await inView('Created the template as version 1.')).toBe(true);
    // An edit far down the page, then Publish from the sticky bar: the message is still in view.
    const editor = await page.waitForSelector('aria/Template body');
    await editor!.click();
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    await page.keyboard.sendCharacter('<p>Signed</p>');
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await click(page, 'Publish', 'button');
    await waitForText(page, 'Saved as version 2 and published it.');
    expect(await inView('Saved as version 2 and published it.')).toBe(true);
    // The editor takes the saved version as its new base before the next keystrokes.
    await waitForText(page, 'based on version 2');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A refusal names its reasons, each a link to its line.
    await editor!.click();
    await page.keyboard.down('Control');
    await page.keyboard.press('End');
    await page.keyboard.up('Control');
    await page.keyboard.press('Enter');
    await page.keyboard.sendCharacter('{{ undeclared_thing }}');
    await click(page, 'Publish', 'button');
    await waitForText(page, 'Not published: 1 problem');
    expect(await inView('Not published: 1 problem')).toBe(true);
    await checkScreen(author, 'template-editor-refusal');
    const link = await page.waitForSelector('.editor-messages button.link-button');
    expect(await link!.evaluate((el) => el.textContent)).toMatch(/^body line \d+$/);
    await link!.click();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Template body');
  });

  it('asks in a dialog named "Unsaved changes" before leaving with unsaved changes', async () => {
    const { page } = author;
    const url = page.url();
    await click(page, 'Templates', 'link');
    await page.waitForSelector('aria/Unsaved changes[role="dialog"]', { visible: true });
    await checkScreen(author, 'template-editor-unsaved-changes');
    await click(page, 'Keep editing', 'button');
    expect(page.url()).toBe(url);
    expect(await editorText(page, 'Template body')).toContain('{{ undeclared_thing }}');
    await click(page, 'Templates', 'link');
    await click(page, 'Leave without saving', 'button');
    await page.waitForSelector('aria/Certificate[role="link"]');
    // Back in the editor later, the draft is still there.
    await click(page, 'Certificate', 'link');
    await waitForText(page, 'were restored');
    expect(await editorText(page, 'Template body')).toContain('{{ undeclared_thing }}');
    await click(page, 'Discard changes', 'button');
  });

  it('starts from the gallery; "Check" validates the sample data against the schema', async () => {
    const { page } = author;
    await click(page, 'Templates', 'link');
    await click(page, 'New template', 'button');
    await click(page, 'Invoice', 'link');
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('INV-2026-00042') && text.includes('Preview up to date'),
      { timeoutMs: 60_000, description: 'the gallery invoice previewed' },
    );
    await click(page, 'Check', 'button');
    await waitForText(page, 'Check passed');
    const sample = JSON.parse(
      readFileSync(new URL('../../src/gallery/invoice/sample-data.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    await clearEditor(page, 'Sample data');
    await page.keyboard.sendCharacter(JSON.stringify({ ...sample, issueDate: '21.11.2026' }, null, 2));
    await click(page, 'Check', 'button');
    await waitForText(page, 'Check found');
    expect(await page.$eval('.editor-messages', (el) => el.textContent)).toContain('issueDate');
    // The preview says the same in words (the render refuses the variables).
    await pollUntil(
      () => regionText(page, 'Preview'),
      (text) => text.includes('Preview out of date') && text.includes('issueDate'),
      { timeoutMs: 30_000, description: 'the schema problem in the preview pane' },
    );
    for (const width of [800, 1440]) {
      await page.setViewport({ width, height: 900 });
      // The preview redraws its pages to the new width; then nothing may stick out sideways.
      const sideways = () =>
        page.evaluate(() => {
          const over = document.documentElement.scrollWidth - document.documentElement.clientWidth;
          const wide = Array.from(document.querySelectorAll('body *'))
            .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .slice(0, 5)
            .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).replace(/\s+/g, '.')}`);
          return { over, wide };
        });
      await pollUntil(sideways, (s) => s.over <= 0, {
        timeoutMs: 20_000,
        description: `no horizontal scroll at ${width} px`,
      });
      await checkScreen(author, `template-editor-gallery-${width}`);
    }
    await page.setViewport({ width: 1280, height: 900 });
  });
});
