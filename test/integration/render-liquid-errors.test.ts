// Liquid and library errors reach authors in docgen's words: no errno codes, no file-system
// roots, no library internals (src/render/liquid/liquid-error-text.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/template.ts';
import { RenderError } from '../../src/render/render-error.ts';
import { LiquidRenderer } from '../../src/render/liquid/liquid-renderer.ts';
import { authorFacingLiquidMessage } from '../../src/render/liquid/liquid-error-text.ts';

let liquid: LiquidRenderer;

beforeAll(async () => {
  liquid = new LiquidRenderer({ workers: 1, timeoutMs: 2_000, memoryMb: 48 });
  await liquid.start();
});

afterAll(async () => {
  await liquid?.stop();
});

async function failure(
  body: string,
  partials: Record<string, string> = {},
  variables: JsonObject = {},
): Promise<RenderError> {
  try {
    await liquid.render({ body, css: '', partials, headerTemplate: '', footerTemplate: '', variables });
  } catch (err) {
    return err as RenderError;
  }
  throw new Error('rendered');
}

describe('Liquid error texts', () => {
  it.each([
    ['an include of a path', '{% include "/etc/passwd" %}'],
    ['an include of a missing partial', '{% include "nope" %}'],
    ['a render of a relative path', '{% render "../secret" %}'],
    ['a layout of a missing partial', '{% layout "base" %}x'],
  ])('%s names the missing partial without errno codes or paths', async (_, body) => {
    const err = await failure(body);
    expect(err.code).toBe('LIQUID_ERROR');
    expect(err.message).toMatch(/partial ".*" does not exist/);
    expect(err.message).not.toMatch(/ENOENT|E[A-Z]{3,}:|Failed to lookup|\/work|node_modules|\bin \[/);
  });

  it('keeps the position liquidjs reports', () => {
    expect(authorFacingLiquidMessage('ENOENT: Failed to lookup "nope" in "", line:1, col:1')).toBe(
      'partial "nope" does not exist, line:1, col:1',
    );
    expect(authorFacingLiquidMessage("EACCES: permission denied, open '/x'")).toBe('permission denied');
    expect(authorFacingLiquidMessage('undefined filter: frob, line:1, col:4')).toBe(
      'undefined filter: frob, line:1, col:4',
    );
  });
});
