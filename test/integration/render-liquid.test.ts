import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/template.ts';
import { LiquidRenderer } from '../../src/render/liquid/liquid-renderer.ts';
import type { LiquidRenderRequest } from '../../src/render/liquid/liquid-renderer.ts';
import { RenderError } from '../../src/render/render-error.ts';
import { ENDLESS_LIQUID_LOOP } from '../harness/liquid-loops.ts';

const TIMEOUT_MS = 1_000;
let liquid: LiquidRenderer;

beforeAll(async () => {
  liquid = new LiquidRenderer({ workers: 2, timeoutMs: TIMEOUT_MS, memoryMb: 48 });
  await liquid.start();
});

afterAll(async () => {
  await liquid?.stop();
});

function request(body: string, variables: JsonObject = {}, partials: Record<string, string> = {}): LiquidRenderRequest {
  return { body, css: '', partials, headerTemplate: '', footerTemplate: '', variables };
}

/** The rendered body, without the document around it. */
async function body(
  source: string,
  variables: JsonObject = {},
  partials: Record<string, string> = {},
): Promise<string> {
  const { html } = await liquid.render(request(source, variables, partials));
  return html.slice(html.indexOf('<body>\n') + 7, html.lastIndexOf('\n</body>'));
}

async function failure(promise: Promise<unknown>): Promise<RenderError> {
  const err = await promise.then(
    () => {
      throw new Error('expected the render to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RenderError);
  return err as RenderError;
}

async function stillServes(): Promise<void> {
  expect(await body('ok {{ n }}', { n: 1 })).toBe('ok 1');
}

describe('Liquid rendering', () => {
  it('produces a full HTML document with the version CSS', async () => {
    const { html } = await liquid.render({
      ...request('<p>{{ x }}</p>', { x: 'hi' }),
      css: 'p { color: red } </style><b>',
    });
    expect(html).toMatch(/^<!DOCTYPE html>\n<html><head><meta charset="utf-8"><style>/);
    expect(html).toContain('p { color: red } <\\/style><b>');
    expect(html).toContain('<body>\n<p>hi</p>\n</body></html>');
  });

  it('escapes output by default and lets raw opt out', async () => {
    const v = { s: '<b>Tom & "Jerry"</b>', list: ['<i>', '&'] };
    expect(await body('{{ s }}', v)).toBe('&lt;b&gt;Tom &amp; &#34;Jerry&#34;&lt;/b&gt;');
    expect(await body('{{ s | raw }}', v)).toBe('<b>Tom & "Jerry"</b>');
    expect(await body('{% echo s %}', v)).toBe('&lt;b&gt;Tom &amp; &#34;Jerry&#34;&lt;/b&gt;');
    expect(await body('{{ list }}', v)).toBe('&lt;i&gt;&amp;');
    expect(await body('{{ s | upcase }}', v)).toBe('&lt;B&gt;TOM &amp; &#34;JERRY&#34;&lt;/B&gt;');
  });

  it('does not escape twice after escape, escape_once or newline_to_br', async () => {
    const v = { s: 'a < b & c', addr: 'Street <1>\nTown' };
    expect(await body('{{ s | escape }}', v)).toBe('a &lt; b &amp; c');
    expect(await body('{{ s | escape | escape_once }}', v)).toBe('a &lt; b &amp; c');
    expect(await body('{{ "a &amp; b" | escape_once }}')).toBe('a &amp; b');
    expect(await body('{{ addr | newline_to_br }}', v)).toBe('Street &lt;1&gt;<br />\nTown');
    expect(await body('{{ addr | escape | newline_to_br }}', v)).toBe('Street &lt;1&gt;<br />\nTown');
  });

  it('keeps prototypes out of reach', async () => {
    expect(
      await body('[{{ o.constructor }}][{{ o.__proto__ }}][{{ o.toString }}][{{ s.size }}]', { o: {}, s: 'abc' }),
    ).toBe('[][][][3]');
  });

  it('renders partials from the version only, with the variables visible inside', async () => {
    const partials = {
      line: '<li>{{ item }} {{ currency }}</li>',
      wrapper: '<ul>{% for item in items %}{% render "line", item: item %}{% endfor %}</ul>',
    };
    expect(await body('{% render "wrapper" %}', { items: ['a', 'b'], currency: 'EUR' }, partials)).toBe(
      '<ul><li>a EUR</li><li>b EUR</li></ul>',
    );
    expect(await body('{% include "line" %}', { item: 'x', currency: '<' }, partials)).toBe('<li>x &lt;</li>');
  });

  it('cannot reach the file system or partials by path', async () => {
    for (const name of ['/etc/passwd', '../../../../etc/passwd', 'file:///etc/passwd', 'constructor', '__proto__']) {
      for (const tag of ['render', 'include', 'layout']) {
        const err = await failure(liquid.render(request(`{% ${tag} "${name}" %}`, {}, { 'etc/passwd': 'nope' })));
        expect(err.code).toBe('LIQUID_ERROR');
        expect(err.kind).toBe('permanent');
        // In the author's words (issue #16): the partial is named, no errno code or lookup roots.
        expect(err.message).toContain(`partial ${JSON.stringify(name)} does not exist`);
        expect(err.message).not.toMatch(/ENOENT|Failed to lookup/);
      }
    }
  });

  it('reports Liquid errors permanently with what went wrong', async () => {
    const err = await failure(liquid.render(request('{{ x | no_such_filter }}')));
    expect(err).toMatchObject({ code: 'LIQUID_ERROR', kind: 'permanent' });
    expect(err.message).toBe('Liquid error in template body: undefined filter: no_such_filter, line:1, col:1');
  });

  it('renders header and footer templates with the variables, escaped', async () => {
    const out = await liquid.render({
      ...request('x', { no: 'A<1>' }),
      headerTemplate: '<div>{{ no }}</div>',
      footerTemplate: '<span class="pageNumber"></span> {{ no | raw }}',
    });
    expect(out.headerTemplate).toBe('<div>A&lt;1&gt;</div>');
    expect(out.footerTemplate).toBe('<span class="pageNumber"></span> A<1>');
  });

  it('renders in sandboxed worker processes: heap limit, permission model, no environment', async () => {
    expect(await body('{{ env.PATH }}{{ process.env.PATH }}')).toBe('');
    const { pids } = liquid.stats();
    expect(pids).toHaveLength(2);
    for (const pid of pids) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(argv).toEqual(
        expect.arrayContaining(['--max-old-space-size=48', '--permission', '--disallow-code-generation-from-strings']),
      );
      expect(argv.filter((a) => a.startsWith('--allow-fs-read=')).join(' ')).not.toMatch(
        /=\/(etc|proc|root|tmp)?\/?( |$)/,
      );
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      // Only Node's own IPC variables (and the test harness's marker, when set).
      expect(environ.filter((v) => !/^(NODE_CHANNEL_[A-Z_]+|DOCGEN_TEST_SPAWNED_BY)=/.test(v))).toEqual([]);
    }
  });

  it('stops its worker processes on stop()', async () => {
    const other = new LiquidRenderer({ workers: 1, timeoutMs: 500, memoryMb: 32 });
    await other.start();
    const [pid] = other.stats().pids;
    expect(existsSync(`/proc/${pid}`)).toBe(true);
    await other.stop();
    expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});

describe('Liquid resource limits', () => {
  it('stops an endless loop within the time-out, permanently, and keeps serving', async () => {
    const started = Date.now();
    const err = await failure(
      liquid.render(request('{% for i in (1..100000) %}{% for j in (1..100000) %}{{ j }}{% endfor %}{% endfor %}')),
    );
    // Without the time-out these would run for hours; the bound leaves room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 5);
    expect(err.kind).toBe('permanent');
    expect(['LIQUID_TIMEOUT', 'LIQUID_ERROR']).toContain(err.code);
    await stillServes();
  });

  it('fails a 10^8 range at once instead of allocating it', async () => {
    const started = Date.now();
    const err = await failure(liquid.render(request('{% for i in (1..100000000) %}{{ i }}{% endfor %}')));
    // Without the time-out these would run for hours; the bound leaves room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 5);
    expect(err.kind).toBe('permanent');
    await stillServes();
  });

  it('kills the worker process when liquidjs does not stop by itself', async () => {
    const hard = new LiquidRenderer({ workers: 1, timeoutMs: 300, memoryMb: 48, softTimeLimit: false });
    await hard.start();
    try {
      const started = Date.now();
      const err = await failure(hard.render(request(ENDLESS_LIQUID_LOOP)));
      expect(Date.now() - started).toBeLessThan(800);
      expect(err).toMatchObject({ code: 'LIQUID_TIMEOUT', kind: 'permanent' });
      expect(err.message).toContain('300 ms');
      expect(hard.stats()).toMatchObject({ timeouts: 1, respawns: 1 });
      const ok = await hard.render(request('{{ 1 | plus: 1 }}'));
      expect(ok.html).toContain('\n2\n');
    } finally {
      await hard.stop();
    }
  });

  it('kills a render that exhausts its heap, permanently, and keeps serving', async () => {
    // Doubling an escaped string: liquidjs's allocation counter does not see captures.
    const bomb =
      '{% assign x = "0123456789" %}{% for i in (1..40) %}{% capture x %}{{ x }}{{ x }}{% endcapture %}{% endfor %}';
    const err = await failure(liquid.render(request(bomb)));
    expect(err).toMatchObject({ code: 'LIQUID_MEMORY', kind: 'permanent' });
    expect(err.message).toBe('Liquid rendering exceeded its memory limit of 48 MB');
    expect(liquid.stats().memoryKills).toBe(1);
    await stillServes();
  });

  it('survives deep nesting and self-including partials', async () => {
    const nested = (depth: number) => '{% if true %}'.repeat(depth) + 'deep' + '{% endif %}'.repeat(depth);
    expect(await body(nested(300))).toBe('deep');
    const tooDeep = await failure(liquid.render(request(nested(20_000))));
    expect(tooDeep).toMatchObject({ code: 'LIQUID_ERROR', kind: 'permanent' });
    expect(tooDeep.message).toBe('Liquid error in template body: template nesting too deep');
    const started = Date.now();
    const err = await failure(liquid.render(request('{% include "self" %}', {}, { self: 'x{% include "self" %}' })));
    expect(err).toMatchObject({ code: 'LIQUID_ERROR', kind: 'permanent' });
    expect(err.message).toContain('nested more than 64 deep');
    expect(Date.now() - started).toBeLessThan(500);
    // Recursion that ends (a tree) is fine.
    const tree = {
      name: 'root',
      children: [
        { name: 'a', children: [{ name: 'a1', children: [] }] },
        { name: 'b', children: [] },
      ],
    };
    const node = '{{ node.name }}({% for child in node.children %}{% render "node", node: child %}{% endfor %})';
    expect(await body('{% render "node", node: tree %}', { tree }, { node })).toBe('root(a(a1())b())');
    await stillServes();
  });

  it('classifies a time-out caused by the caller deadline as transient', async () => {
    const err = await failure(
      liquid.render(request(ENDLESS_LIQUID_LOOP), {
        deadline: Date.now() + 150,
      }),
    );
    expect(err).toMatchObject({ code: 'RENDER_TIMEOUT', kind: 'transient' });
    await stillServes();
  });

  it('serves others while one render loops', async () => {
    // A time-out far beyond the test: the others must be answered while the loop still runs,
    // whatever the machine's load (not merely before some clock runs out).
    const patient = new LiquidRenderer({ workers: 2, timeoutMs: 60_000, memoryMb: 48 });
    await patient.start();
    try {
      let looping = true;
      const slow = failure(patient.render(request(ENDLESS_LIQUID_LOOP))).finally(() => (looping = false));
      for (let i = 0; i < 5; i++) {
        const { html } = await patient.render(request('ok {{ n }}', { n: i }));
        expect(html).toContain(`ok ${i}`);
      }
      expect(looping).toBe(true);
      await patient.stop();
      await slow;
    } finally {
      await patient.stop();
    }
  });
});
