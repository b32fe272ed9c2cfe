/// <reference lib="dom" />
// The portal's parts of document standards, in real Chromium on a stack seeded as `docgen dev`
// seeds it: the owner uploads a signing certificate on the Certificates screen (a wrong
// password is refused in words, nothing listed), sees its subject, issuer and validity, and
// opens the seeded "E-invoice (Factur-X EN 16931)" template, whose Document standards section
// shows PDF/A-3b, the e-invoice and the outline, and offers the certificate to sign with.
// Every screen passes axe and loads nothing from elsewhere (checkScreen).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, ElementHandle } from 'puppeteer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devOwnerInvitation } from '../../src/dev/dev-portal-owner.ts';
import { seedDevData, type DevSeed } from '../../src/dev/dev-seed.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { pkcs12, testPki } from '../harness/signing-certificates.ts';
import {
  checkScreen,
  click,
  fill,
  launchBrowser,
  openPage,
  setPasswordFromInvitation,
  startPortalStack,
  waitForText,
  type PortalStack,
  type WatchedPage,
} from './portal-stack.ts';

let stack: PortalStack;
let browser: Browser;
let seed: DevSeed;
let owner: WatchedPage;
let dir: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([startPortalStack(), launchBrowser()]);
  dir = uniqueRunDir('portal-document-standards');
  seed = await seedDevData(stack.api.app, join(dir, 'dev-seed.json'));
  owner = await openPage(browser, stack.origin);
  const { page } = owner;
  const invitation = await devOwnerInvitation(stack.api.app, seed.workspaceId);
  await page.goto(stack.origin + new URL(invitation.inviteUrl).pathname);
  await setPasswordFromInvitation(page, { password: 'correct horse battery staple', name: 'Dev owner' });
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await stack?.close();
});

describe('document standards in the portal', () => {
  it('uploads, lists and refuses signing certificates on the Certificates screen', async () => {
    const { page } = owner;
    const pki = testPki();
    const file = join(dir, 'billing.p12');
    writeFileSync(file, pkcs12(pki.signer, [pki.ca], 'portal secret'));
    await click(page, 'Certificates', 'link');
    await page.waitForSelector('aria/Certificates[role="heading"]');
    const input = (await page.waitForSelector('input[type="file"]')) as ElementHandle<HTMLInputElement>;
    await input.uploadFile(file);
    await fill(page, 'Certificate name', 'Billing');
    await fill(page, 'Certificate password', 'not the password');
    await click(page, 'Upload certificate', 'button');
    await waitForText(page, 'The certificate password is wrong');
    expect(await page.$$('table')).toHaveLength(0);

    await fill(page, 'Certificate password', 'portal secret');
    await click(page, 'Upload certificate', 'button');
    await waitForText(page, 'Uploaded Billing');
    await waitForText(page, 'CN=Nordlicht Software GmbH Signer, O=docgen tests');
    await waitForText(page, 'CN=docgen Test CA, O=docgen tests');
    await page.waitForSelector('aria/Delete Billing[role="button"]');
    await checkScreen(owner, 'certificates');
  }, 60_000);

  it("shows the seeded e-invoice template's document standards and offers the certificate", async () => {
    const { page } = owner;
    await click(page, 'Templates', 'link');
    await click(page, 'E-invoice (Factur-X EN 16931)', 'link');
    // The sections are drawn again once the version has loaded: open one after that.
    await waitForText(page, 'Preview up to date', 60_000);
    await click(page, 'Document standards');
    const checked = async (name: string) => {
      const handle = await page.waitForSelector(`aria/${name}[role="checkbox"]`);
      return handle!.evaluate((el) => (el as HTMLInputElement).checked);
    };
    expect(await checked('PDF/A-3b')).toBe(true);
    expect(await checked('PDF/UA-1')).toBe(false);
    expect(await checked('Embed an e-invoice (needs PDF/A-3b or PDF/A-3u)')).toBe(true);
    expect(await checked('Outline (bookmarks from the headings)')).toBe(true);
    const select = await page.waitForSelector('aria/E-invoice data variable[role="combobox"]');
    expect(await select!.evaluate((el) => (el as HTMLSelectElement).value)).toBe('eInvoice');
    const certificate = await page.waitForSelector('aria/Signature certificate[role="combobox"]');
    await page.waitForFunction((el) => (el as HTMLSelectElement).options.length > 1, { timeout: 15_000 }, certificate);
    const options = await certificate!.evaluate((el) =>
      Array.from((el as HTMLSelectElement).options, (o) => o.textContent),
    );
    expect(options).toEqual(['not signed', 'Billing (CN=Nordlicht Software GmbH Signer, O=docgen tests)']);
    await certificate!.scrollIntoView();
    expect(await page.$$eval('[role="alert"]', (els) => els.map((e) => e.textContent))).toEqual([]);
    await checkScreen(owner, 'template-document-standards');
  }, 90_000);
});
