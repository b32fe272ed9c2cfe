// Chromium sees a few named variables, never the service's (its secrets), and runs without its
// sandbox only when the operator says so (DOCGEN_CHROMIUM_NO_SANDBOX=true).

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { CHROMIUM_ENVIRONMENT_NAMES } from '../../src/render/chromium/chromium-environment.ts';
import { processTree } from '../../src/render/chromium/process-tree.ts';
import { createRenderEngine, type RenderEngine } from '../../src/render/render-engine.ts';
import { uniqueRunDir } from '../harness/dependencies.ts';
import { renderEngineTestConfig } from '../harness/test-config.ts';
import { leftovers, pdfText } from './render-support.ts';

const CANARY_NAME = `DOCGEN_TEST_CANARY_${randomBytes(4).toString('hex').toUpperCase()}`;
const CANARY_VALUE = `canary-${randomBytes(12).toString('hex')}`;
let engine: RenderEngine;
let profiles: string;

beforeAll(async () => {
  // Set on this process before Chromium starts, as DOCGEN_SECRET_KEY would be on docgen's.
  process.env[CANARY_NAME] = CANARY_VALUE;
  profiles = uniqueRunDir('chromium-environment');
  engine = await createRenderEngine(renderEngineTestConfig({ concurrency: 1, userDataDir: profiles }));
});

afterAll(async () => {
  delete process.env[CANARY_NAME];
  await engine?.close();
  expect(leftovers({ dir: profiles })).toEqual([]);
});

function environ(pid: number): string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return undefined; // a helper that ended meanwhile
  }
}

describe("Chromium's environment", () => {
  it("carries none of the service's variables: every Chromium process, read during a render", async () => {
    const seen = new Map<number, string[]>();
    const { pdf } = await engine.renderer.render(
      { body: '<p>Environment check</p>', css: '', partials: {}, variables: [], pdfOptions: DEFAULT_PDF_OPTIONS },
      {},
      {
        // Called while the page is being printed: the renderer process is alive.
        onStage: () => {
          const browserPid = engine.stats().pool.browserPid;
          if (browserPid === null) return;
          for (const pid of processTree(browserPid)) {
            const env = environ(pid);
            if (env) seen.set(pid, env);
          }
        },
      },
    );
    expect(await pdfText(pdf)).toContain('Environment check');
    // The browser, its zygote(s) and at least one renderer.
    expect(seen.size).toBeGreaterThanOrEqual(3);
    for (const [pid, env] of seen) {
      const text = env.join('\n');
      expect(text, `process ${pid}`).not.toContain(CANARY_NAME);
      expect(text, `process ${pid}`).not.toContain(CANARY_VALUE);
      expect(text, `process ${pid}`).not.toMatch(/DOCGEN_/);
      // Only the named variables. (Chromium rewrites its helpers' process titles over the memory
      // /proc shows as environ: what is not NAME=value there is the tail of a title.)
      const names = env.flatMap((entry) => /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(entry)?.[1] ?? []);
      const foreign = names.filter((n) => !CHROMIUM_ENVIRONMENT_NAMES.includes(n) && !/^(CHROME|GOOGLE)_/.test(n));
      expect(foreign, `process ${pid}`).toEqual([]);
    }
  });
});

describe("Chromium's sandbox", () => {
  it('is on unless DOCGEN_CHROMIUM_NO_SANDBOX=true: a machine that cannot sandbox refuses to start, naming the setting', async () => {
    const dir = uniqueRunDir('chromium-sandboxed');
    let started: RenderEngine | undefined;
    let failure: Error | undefined;
    try {
      started = await createRenderEngine(
        renderEngineTestConfig({ concurrency: 1, userDataDir: dir, noSandbox: false }),
      );
    } catch (err) {
      failure = err as Error;
    }
    if (started) {
      // This machine can sandbox (not root, user namespaces allowed): Chromium runs with it.
      expect(process.getuid?.()).not.toBe(0);
      const pid = started.stats().pool.browserPid!;
      expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain('--no-sandbox');
      await started.close();
    } else {
      expect(failure?.message).toContain('DOCGEN_CHROMIUM_NO_SANDBOX=true');
      expect(failure?.message).toMatch(/sandbox/);
    }
    expect(leftovers({ dir })).toEqual([]);
  });

  it('is off only as configured: the running browser was started with --no-sandbox', () => {
    const pid = engine.stats().pool.browserPid!;
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('--no-sandbox');
  });
});
