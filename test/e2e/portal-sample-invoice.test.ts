/// <reference lib="dom" />
// A new author's first minutes on a fresh `docgen dev`-like stack, in real Chromium: the stack is
// seeded exactly as `docgen dev` seeds it (src/dev/dev-seed.ts: the gallery's invoice, published,
// with its sample data), the dev owner's invitation is accepted, and the sample invoice opens in
// the editor with a rendered preview (money and dates formatted, the EPC QR code drawn) and no
// error. `docgen admin template preview` without --data works on it too.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devOwnerInvitation } from '../../src/dev/dev-portal-owner.ts';
import { seedDevData, type DevSeed } from '../../src/dev/dev-seed.ts';
import { inProcessCli } from '../harness/admin-cli.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';
import {
  checkScreen,
  click,
  launchBrowser,
  openPage,
  setPasswordFromInvitation,
  regionText,
  startPortalStack,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

let stack: PortalStack;
let browser: Browser;
let seed: DevSeed;
let author: WatchedPage;
let dir: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startPortalStack(), launchBrowser()]);
  dir = uniqueRunDir('portal-sample-invoice');
  seed = await seedDevData(stack.api.app, join(dir, 'dev-seed.json'));
  author = await openPage(browser, stack.origin);
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stack?.close();
});

describe('the sample invoice on a fresh docgen dev', () => {
  it('opens in the editor with a rendered preview and no error', async () => {
    const { page } = author;
    const owner = await devOwnerInvitation(stack.api.app, seed.workspaceId);
    await page.goto(stack.origin + new URL(owner.inviteUrl).pathname);
    await setPasswordFromInvitation(page, { password: 'correct horse battery staple', name: 'Dev owner' });

    await click(page, 'Sample invoice', 'link');
    const count = () => page.$eval('[aria-label="Preview"]', (el) => Number(el.getAttribute('data-preview-count')));
    await pollUntil(count, (n) => n > 0, { timeoutMs: 60_000, description: 'the first preview' });
    const preview = await regionText(page, 'Preview');
    for (const text of ['INV-2026-00042', '€2,816.61', 'Nov 21, 2026', 'Scan with your banking app'])
      expect(preview, text).toContain(text);
    // No error anywhere on the screen: not in the preview pane, not at a line of the editor.
    expect(await page.$$eval('[role="alert"]', (els) => els.map((e) => e.textContent))).toEqual([]);
    expect(preview).not.toContain('Not rendered');
    expect(await page.$$('.cm-lintRange-error')).toHaveLength(0);
    // The QR code is on the page the preview drew (pdf.js draws it into a canvas: pixels, not text);
    // its PDF is checked with a real reader below.
    await checkScreen(author, 'sample-invoice-first-open');
  }, 120_000);

  it('`docgen admin template preview` without --data renders it with its sample data', async () => {
    const out = join(dir, 'preview.pdf');
    const { cli } = inProcessCli({
      env: { DOCGEN_ADMIN_URL: stack.origin, DOCGEN_ADMIN_TOKEN: stack.api.deps.adminToken },
    });
    const result = await cli('template', 'preview', seed.templateId, '--out', out);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const text = execFileSync('pdftotext', ['-enc', 'UTF-8', out, '-'], { encoding: 'utf8' });
    expect(text).toContain('€2,816.61');
    execFileSync('pdftoppm', ['-gray', '-r', '300', out, join(dir, 'preview')]);
    const codes = execFileSync('zbarimg', ['-q', '--raw', join(dir, 'preview-1.pgm')], { encoding: 'utf8' });
    expect(codes).toContain(
      'BCD\n002\n1\nSCT\nCOBADEFFXXX\nNordlicht Software GmbH\nDE89370400440532013000\nEUR2816.61',
    );
    expect(readFileSync(out).subarray(0, 5).toString()).toBe('%PDF-');
  }, 60_000);
});
