// `docgen admin` against the admin handlers through createRouterTransport: the CLI's parsing
// and output, the handlers' proto translation and error codes, and the admin plane's rules,
// in process on the MongoDB stand-in (the real Liquid analyzer; previews are not rendered).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminClients } from '../../src/cli/admin/admin-client.ts';
import { inProcessAdminClients, inProcessCli } from '../harness/admin-cli.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;
let clients: AdminClients;
let files: string;

beforeAll(async () => {
  stack = await startInProcessStack();
  clients = inProcessAdminClients(stack);
  files = await mkdtemp(join(tmpdir(), 'docgen-admin-cli-'));
});

afterAll(async () => {
  await stack?.close();
});

const { cli, json } = inProcessCli({ clients: () => clients });

describe('docgen admin in process', () => {
  it('creates a workspace, a key that authenticates, and a published template', async () => {
    const ws = (await json('workspace', 'create', '--name', 'Acme')).id as string;
    expect(ws).toMatch(/^ws_[0-9a-f]{24}$/);

    const key = await json(
      'key',
      'create',
      '--workspace',
      ws,
      '--name',
      'ci',
      '--scopes',
      'generations:trigger,generations:read',
    );
    expect(key.key).toMatch(/^svc_live_[A-Za-z0-9]{40}$/);
    const page = await stack.api.listGenerations({ authorization: `Bearer ${key.key as string}` }, () => ({}));
    expect(page.generations).toEqual([]);

    const body = join(files, 'letter.liquid');
    const vars = join(files, 'vars.json');
    await writeFile(body, '<p>Dear {{ customer }}</p>');
    await writeFile(vars, JSON.stringify({ customer: { required: true, description: 'Who it is for' } }));
    const tpl = await json(
      'template',
      'create',
      '--workspace',
      ws,
      '--name',
      'Letter',
      '--file',
      body,
      '--variables',
      vars,
      '--publish',
    );
    expect(tpl).toEqual({ id: expect.stringMatching(/^tpl_/), version: 1 });

    const shown = await cli('template', 'get', tpl.id as string);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^status: +ACTIVE$/m);
    expect(shown.stdout).toMatch(/^published version: +1$/m);
  });

  it('refuses to publish Liquid that uses an undeclared variable, naming it', async () => {
    const ws = (await json('workspace', 'create', '--name', 'Strict')).id as string;
    const body = join(files, 'undeclared.liquid');
    await writeFile(body, '<p>{{ total }}</p>');
    const tpl = (await json('template', 'create', '--workspace', ws, '--name', 'Bill', '--file', body)).id as string;
    const result = await cli('template', 'publish', tpl, '--version', '1');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('total');
  });

  it('answers refusals from the services with exit code 1 and their words', async () => {
    const ws = (await json('workspace', 'create', '--name', 'Errors')).id as string;
    const badScope = await cli('key', 'create', '--workspace', ws, '--name', 'x', '--scopes', 'generations:delete');
    expect(badScope.code).toBe(1);
    expect(badScope.stderr).toMatch(/^docgen admin: .*scopes/m);
    const missing = await cli('key', 'revoke', 'key_000000000000000000000000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/not found/i);
    const unknownWorkspace = await cli('template', 'list', '--workspace', 'ws_000000000000000000000000');
    expect(unknownWorkspace.code).toBe(1);
  });

  it('a usage mistake is exit code 2 and never reaches the services', async () => {
    const result = await cli('key', 'create', '--workspace', 'ws_1', '--name', 'x');
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('--scopes is required');
  });
});
