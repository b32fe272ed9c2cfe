// Blast radius of hostile templates: for each hostile case, one hostile render starts beside
// 8 good renders (another workspace's, the sample-sized "hello" document), all at once, on one
// render engine (DOCGEN_RENDER_CONCURRENCY pages, default 4). Prints, per case, how long the
// hostile render took and how it ended, and how many of the good renders failed (per attempt:
// the pipeline would retry them, but each failure is a render another workspace lost).
//
//   npx node bench/render-blast-radius.ts              # all cases, 3 rounds each
//   BLAST_ROUNDS=1 BLAST_CASES=header-stylesheet npx node bench/render-blast-radius.ts

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_PDF_OPTIONS } from '../src/domain/document-settings.ts';
import { DEFAULT_MAX_HTML_BYTES } from '../src/config/limits.ts';
import type { TemplateVersionContent } from '../src/domain/template.ts';
import { docgenChromium, docgenChromiumNoSandbox } from './lib/measure.ts';
import { createRenderEngine } from '../src/render/render-engine.ts';

const env = process.env;
const ROUNDS = Number(env.BLAST_ROUNDS ?? 3);
const GOOD = Number(env.BLAST_GOOD ?? 8);
// Nothing listens here: a closed loopback port (the walls stop the request anyway).
const HOST = 'http://127.0.0.1:9';
const margins = { top: '20mm', right: '10mm', bottom: '20mm', left: '10mm' };

function content(body: string, header = '', footer = ''): TemplateVersionContent {
  return {
    body,
    css: '',
    partials: {},
    variables: [],
    pdfOptions: { ...DEFAULT_PDF_OPTIONS, margins, headerTemplate: header, footerTemplate: footer },
  };
}

const CASES: Record<string, TemplateVersionContent> = {
  'header-stylesheet': content('<p>body</p>', `<link rel="stylesheet" href="${HOST}/h.css"><span>header</span>`),
  'header-import': content('<p>body</p>', `<style>@import url("${HOST}/h.css");</style><span>header</span>`),
  'header-font-face': content(
    '<p>body</p>',
    `<style>@font-face{font-family:X;src:url("${HOST}/f.woff")} span{font-family:X}</style><span>header</span>`,
  ),
  'footer-preload': content(
    '<p>body</p>',
    '',
    `<link rel="preload" as="image" href="${HOST}/p.png"><span>footer</span>`,
  ),
  'footer-base-img': content('<p>body</p>', '', `<base href="${HOST}/"><img src="x.png"><span>footer</span>`),
  'svg-use-remote': content(`<svg width="10" height="10"><use href="${HOST}/s.svg#a"/></svg><p>body</p>`),
  'one-line-300k-rows': {
    ...content('<table>{% for r in rows %}<tr><td>{{ r }}</td></tr>{% endfor %}</table>'),
    variables: [{ name: 'rows', required: true, description: '' }],
  },
  'one-line-300k-join': {
    ...content('<div>{{ rows | join: "</div><div>" }}</div>'),
    variables: [{ name: 'rows', required: true, description: '' }],
  },
};
const VARIABLES: Record<string, Record<string, unknown>> = {
  'one-line-300k-rows': { rows: Array(300_000).fill(1) },
  'one-line-300k-join': { rows: Array(300_000).fill('row') },
};

const good = content(
  '<h1>Invoice</h1><p>{{ "good" }}</p>',
  '<span style="font-size:8px">head</span>',
  '<span style="font-size:8px">page <span class="pageNumber"></span></span>',
);

const names = env.BLAST_CASES ? env.BLAST_CASES.split(',') : Object.keys(CASES);
const engine = await createRenderEngine({
  chromiumPath: docgenChromium(),
  noSandbox: docgenChromiumNoSandbox(),
  concurrency: Number(env.DOCGEN_RENDER_CONCURRENCY ?? 4),
  timeoutMs: 10_000,
  liquidTimeoutMs: 5_000,
  liquidMemoryMb: 128,
  browserRecycleAfterRenders: 1000,
  browserMaxRssMb: 4096,
  maxAttempts: 3,
  // The service's defaults (DOCGEN_RENDER_LOAD_TIMEOUT_MS, DOCGEN_RENDER_MAX_HTML_BYTES).
  loadTimeoutMs: 5_000,
  maxHtmlBytes: DEFAULT_MAX_HTML_BYTES,
  userDataDir: mkdtempSync(join(tmpdir(), 'docgen-blast-')),
} as never);

console.log(`case                  round  hostile            ms     good failed/${GOOD}  crashes`);
for (const name of names) {
  for (let round = 1; round <= ROUNDS; round++) {
    const crashesBefore = engine.pool.stats().crashes;
    const started = Date.now();
    const hostile = engine.renderer.render(CASES[name]!, (VARIABLES[name] ?? {}) as never).then(
      () => ({ outcome: 'ok', ms: Date.now() - started }),
      (err: { code?: string; kind?: string; message?: string }) => ({
        outcome: `${err.code}`,
        ms: Date.now() - started,
        message: err.message,
      }),
    );
    const goods = await Promise.allSettled(Array.from({ length: GOOD }, () => engine.renderer.render(good, {})));
    const h = await hostile;
    const failed = goods.filter((g) => g.status === 'rejected').length;
    const crashes = engine.pool.stats().crashes - crashesBefore;
    console.log(
      `${name.padEnd(22)}${String(round).padEnd(7)}${h.outcome.padEnd(19)}${String(h.ms).padEnd(7)}${String(failed).padEnd(17)}${crashes}`,
    );
    if (env.BLAST_VERBOSE && 'message' in h) console.log(`   ${h.message}`);
  }
}
await engine.close();
