// `docgen admin` for authoring, against the admin handlers through createRouterTransport (the
// CLI's parsing and output, the handlers' proto translation, the admin plane's rules) on the
// MongoDB stand-in: templates from the gallery, --locale/--time-zone, typed --variables,
// `template types`, the gallery listing, Check of sample data against schemas, and publishing
// refusing a reference that cannot load at its line.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClients } from '../../src/cli/admin/admin-client.ts';
import { GALLERY_NAMES } from '../../src/gallery/gallery.ts';
import { inProcessAdminClients, inProcessCli } from '../harness/admin-cli.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;
let clients: AdminClients;
let files: string;
let workspaceId: string;

beforeAll(async () => {
  stack = await startInProcessStack();
  clients = inProcessAdminClients(stack);
  files = await mkdtemp(join(tmpdir(), 'docgen-authoring-cli-'));
  workspaceId = (await json('workspace', 'create', '--name', 'Authoring')).id as string;
});

afterAll(async () => {
  await stack?.close();
});

const { cli, json } = inProcessCli({ clients: () => clients });

async function file(name: string, text: string): Promise<string> {
  const path = join(files, name);
  await writeFile(path, text);
  return path;
}

describe('docgen admin for authoring', () => {
  it('lists the gallery and creates a published template from each of its names', async () => {
    const listed = (await json('template', 'gallery')).templates as Array<{ name: string; title: string }>;
    expect(listed.map((t) => t.name)).toEqual([...GALLERY_NAMES]);
    expect((await cli('template', 'gallery')).stdout).toMatch(
      /^shipping-label +Shipping label +A 4 × 6 in parcel label/m,
    );
    for (const name of GALLERY_NAMES) {
      const created = await json(
        'template',
        'create',
        '--workspace',
        workspaceId,
        '--name',
        `My ${name}`,
        '--from-gallery',
        name,
        '--publish',
      );
      const version = await json('template', 'version', 'get', created.id as string, '--version', '1');
      const content = version.content as { sampleData: object; variables: Array<{ schema?: object }>; locale: string };
      expect(Object.keys(content.sampleData).length, name).toBeGreaterThan(0);
      expect(
        content.variables.every((v) => v.schema !== undefined),
        name,
      ).toBe(true);
      expect((await json('template', 'get', created.id as string)).publishedVersion).toBe(1);
    }
  });

  it('refuses an unknown gallery name and content flags next to --from-gallery', async () => {
    const unknown = await cli(
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'X',
      '--from-gallery',
      'menu',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(
      '"menu" is not in the gallery; use one of invoice, receipt, letter, certificate, shipping-label, report',
    );
    const body = await file('b.liquid', 'x');
    const both = await cli(
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'X',
      '--from-gallery',
      'letter',
      '--file',
      body,
    );
    expect(both).toMatchObject({ code: 2 });
    expect(both.stderr).toContain('--from-gallery takes its content from the gallery; leave out --file');
    const neither = await cli('template', 'create', '--workspace', workspaceId, '--name', 'X');
    expect(neither.stderr).toContain('--file (the Liquid body) or --from-gallery NAME is required');
  });

  it('stores --locale and --time-zone canonical, and refuses ones it cannot format in', async () => {
    const body = await file('price.liquid', "{{ price | money: 'EUR' }} {{ at | format_date: 'long' }}");
    const vars = await file('price.json', JSON.stringify({ price: { required: true }, at: { required: true } }));
    const created = await json(
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Price',
      '--file',
      body,
      '--variables',
      vars,
      '--locale',
      'de-de',
      '--time-zone',
      'europe/berlin',
    );
    const content = (await json('template', 'version', 'get', created.id as string, '--version', '1')).content as {
      locale: string;
      timeZone: string;
    };
    expect([content.locale, content.timeZone]).toEqual(['de-DE', 'Europe/Berlin']);
    const added = await json('template', 'version', 'add', created.id as string, '--file', body, '--variables', vars);
    const second = (await json('template', 'version', 'get', created.id as string, '--version', String(added.version)))
      .content as { locale: string; timeZone: string };
    expect([second.locale, second.timeZone]).toEqual(['en-US', 'UTC']);
    const bad = await cli('template', 'version', 'add', created.id as string, '--file', body, '--time-zone', 'Berlin');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--time-zone: "Berlin" is not a time zone; use an IANA name such as "Europe/Berlin"');
  });

  it('takes schemas in --variables, refuses a broken one by its place, and prints the TypeScript type', async () => {
    const body = await file('order.liquid', '{% for line in lines %}{{ line.quantity }}{% endfor %}{{ note }}');
    const schema = {
      type: 'array',
      items: {
        type: 'object',
        required: ['quantity'],
        properties: { quantity: { type: 'number', minimum: 1 }, sku: { type: 'string' } },
      },
    };
    const vars = await file(
      'order.json',
      JSON.stringify([
        { name: 'lines', required: true, description: 'Order lines.', schema },
        { name: 'note', required: false, default: '', schema: { type: 'string' } },
      ]),
    );
    const created = await json(
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Order form',
      '--file',
      body,
      '--variables',
      vars,
      '--publish',
    );
    const types = await cli('template', 'types', created.id as string);
    expect(types.code).toBe(0);
    expect(types.stdout).toContain(`export interface OrderFormVariables {
  /** Order lines. */
  lines: Array<{
    quantity: number;
    sku?: string;
  }>;
  note?: string;
}`);
    const named = await json('template', 'types', created.id as string, '--version', '1', '--type-name', 'Order');
    expect(named.typescript).toContain('export interface Order {');

    const broken = await file(
      'broken.json',
      JSON.stringify([{ name: 'lines', required: true, schema: { type: 'list' } }]),
    );
    const refused = await cli(
      'template',
      'version',
      'add',
      created.id as string,
      '--file',
      body,
      '--variables',
      broken,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('content.variables[0].schema');
    expect(refused.stderr).toContain(
      'schema.type must be one of string, number, integer, boolean, object, array, null',
    );
    const notObject = await file('bad.json', JSON.stringify([{ name: 'lines', schema: 'number' }]));
    expect(
      (await cli('template', 'version', 'add', created.id as string, '--file', body, '--variables', notObject)).stderr,
    ).toContain('"schema" must be a JSON Schema object');
  });

  it('Check finds sample data that breaks the schemas', async () => {
    const check = await clients.templates.checkTemplateContent({
      workspaceId,
      content: {
        body: '{{ qty | times: 2 }}',
        variables: [{ name: 'qty', required: true, schema: { type: 'number' } }],
        sampleData: { qty: '3' },
      },
    });
    expect(check.diagnostics.map((d) => [d.source, d.severity, d.message])).toEqual([
      [
        'sample_data',
        'warning',
        'sample data: does not match the variables\' schemas: qty: expected number, got string "3"',
      ],
    ]);
  });

  it('refuses to publish an SVG <use> of another file, at its line', async () => {
    const body = await file(
      'icons.liquid',
      '<h1>Order</h1>\n<svg><use xlink:href="https://icons.example/sprite.svg#cart"/></svg>',
    );
    const refused = await cli(
      'template',
      'create',
      '--workspace',
      workspaceId,
      '--name',
      'Icons',
      '--file',
      body,
      '--publish',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'template body (line 2): <use xlink:href> refers to "https://icons.example/sprite.svg#cart", which cannot load',
    );
    const check = await clients.templates.checkTemplateContent({
      workspaceId,
      content: { body: '<h1>Order</h1>\n<svg><use xlink:href="https://icons.example/sprite.svg#cart"/></svg>' },
    });
    expect(check.diagnostics.map((d) => [d.source, d.line, d.column])).toEqual([['body', 2, 11]]);
  });
});
