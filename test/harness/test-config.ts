// Configuration values the tests share, so that each test file does not invent its own:
// fresh secrets per call, loopback listeners on free ports, and a render engine sized for a
// 2-core CI machine.
import { randomBytes } from 'node:crypto';
import type { RenderEngineConfig } from '../../src/render/render-engine.ts';
import { PageTokens, type PageRequest } from '../../src/store/pagination.ts';
import { chromiumPath } from './dependencies.ts';

/** A fresh 32-byte DOCGEN_SECRET_KEY. */
export function testSecretKey(): Buffer {
  return randomBytes(32);
}

/** DOCGEN_SECRET_KEY of the template repositories a test builds itself: one key, so that every
 * repository of a test opens the PDF passwords another sealed. */
export const TEMPLATES_TEST_KEY: Buffer = Buffer.alloc(32, 7);

/** Page tokens signed with a fresh key. */
export function testPageTokens(): PageTokens {
  return new PageTokens(testSecretKey());
}

/** The first page of a repository's list, for tests that read a repository directly. */
export function firstPage(pageSize = 100): PageRequest {
  return testPageTokens().request({ pageSize }, { list: 'test', filters: {} });
}

/** A fresh operator token (DOCGEN_ADMIN_TOKEN), long enough for the config check. */
export function testAdminToken(): string {
  return `test-admin-${randomBytes(12).toString('hex')}`;
}

/** Every listener on 127.0.0.1 with a port the OS picks (tests read the bound ports back). */
export const LOOPBACK_LISTENERS: Readonly<Record<string, string>> = {
  DOCGEN_PUBLIC_ADDR: '127.0.0.1:0',
  DOCGEN_ADMIN_ADDR: '127.0.0.1:0',
  DOCGEN_OPS_ADDR: '127.0.0.1:0',
};

/** The render engine's settings in tests: the config defaults, with room for a slow machine. */
export function renderEngineTestConfig(overrides: Partial<RenderEngineConfig> = {}): RenderEngineConfig {
  return {
    chromiumPath: chromiumPath(),
    // Explicit, as an operator would set it: the tests run as root here, where Chromium has no sandbox.
    noSandbox: true,
    concurrency: 2,
    timeoutMs: 10_000,
    liquidTimeoutMs: 2_000,
    liquidMemoryMb: 64,
    browserRecycleAfterRenders: 1000,
    browserMaxRssMb: 4096,
    maxAttempts: 3,
    ...overrides,
  };
}
