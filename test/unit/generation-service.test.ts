// GenerationService in process: create, read and list on the real repositories (MongoDB
// stand-in), with the render-job queue and the URL signer in memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ObjectId } from 'mongodb';
import type { Principal } from '../../src/auth/api-key-authenticator.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { parseId } from '../../src/domain/ids.ts';
import { OUTPUT_URL_TTL_SECONDS } from '../../src/generations/generation-service.ts';
import { rejection, startInProcessStack, type InProcessStack } from '../harness/in-process.ts';

let stack: InProcessStack;
let workspaceId: ObjectId;
let principal: Principal;
let templateId: string;

beforeAll(async () => {
  stack = await startInProcessStack();
  workspaceId = await stack.workspace();
  principal = stack.principal(workspaceId);
  templateId = await stack.template(workspaceId, { name: 'Invoice' });
});

afterAll(async () => {
  await stack?.close();
});

const domainError = (promise: Promise<unknown>) => rejection(promise, DomainError);

describe('create', () => {
  it('stores a PENDING generation with the template name and publishes its render job', async () => {
    const view = await stack.generations.create(principal, { templateId, variables: { name: 'Ada' }, format: 'pdf' });
    expect(view).toMatchObject({
      templateId,
      templateName: 'Invoice',
      status: 'PENDING',
      format: 'PDF',
      data: { name: 'Ada' },
      outputUrl: null,
      error: null,
    });
    expect(stack.jobs.published).toContain(view.id);
    const row = await stack.repositories.generations.get(parseId('generation', view.id)!);
    expect(row).toMatchObject({ status: 'PENDING', attempts: 0, templateRef: templateId });
  });

  it('accepts a template id that names nothing (it fails at render time) with an empty name', async () => {
    const other = await stack.workspace();
    const foreign = await stack.template(other, { name: 'Not yours' });
    for (const ref of ['tpl_000000000000000000000000', 'not-an-id', foreign]) {
      const view = await stack.generations.create(principal, { templateId: ref, variables: {}, format: 'pdf' });
      expect(view).toMatchObject({ templateId: ref, templateName: '', status: 'PENDING' });
    }
  });

  it('settle waits for the job-published marks of finished creates, so closing never cuts one off', async () => {
    const { generations } = stack.repositories;
    const original = generations.markJobPublished.bind(generations);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    generations.markJobPublished = async (id, at) => {
      await held;
      return original(id, at);
    };
    try {
      const view = await stack.generations.create(principal, { templateId, variables: {}, format: 'pdf' });
      const id = parseId('generation', view.id)!;
      let settled = false;
      const settling = stack.generations.settle().then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(settled).toBe(false);
      release();
      await settling;
      expect((await generations.get(id))?.jobPublishedAt).toBeInstanceOf(Date);
      expect(stack.publishErrors.map((e) => e.generationId)).not.toContain(view.id);
    } finally {
      generations.markJobPublished = original;
    }
  });

  it('a failed publish still answers PENDING and leaves the row to the outbox sweeper', async () => {
    stack.jobs.failing = true;
    try {
      const view = await stack.generations.create(principal, { templateId, variables: {}, format: 'pdf' });
      expect(view.status).toBe('PENDING');
      expect(stack.publishErrors.map((e) => e.generationId)).toContain(view.id);
      const row = await stack.repositories.generations.get(parseId('generation', view.id)!);
      expect(row?.jobPublishedAt).toBeNull();
    } finally {
      stack.jobs.failing = false;
    }
  });

  it('an Idempotency-Key returns the same generation for the same body and refuses another body', async () => {
    const before = stack.jobs.published.length;
    const input = { templateId, variables: { name: 'Grace', n: 1 }, format: 'pdf' as const };
    const first = await stack.generations.create(principal, input, 'order-1');
    const again = await stack.generations.create(
      principal,
      { ...input, variables: { n: 1, name: 'Grace' } },
      'order-1',
    );
    expect(again.id).toBe(first.id);
    expect(stack.jobs.published.length).toBe(before + 1);
    const reused = await domainError(
      stack.generations.create(principal, { ...input, variables: { name: 'Other' } }, 'order-1'),
    );
    expect(reused.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('idempotency keys are scoped to the workspace', async () => {
    const other = await stack.workspace();
    const otherPrincipal = { ...principal, workspaceId: other };
    const input = { templateId, variables: {}, format: 'pdf' as const };
    const mine = await stack.generations.create(principal, input, 'shared-key');
    const theirs = await stack.generations.create(otherPrincipal, input, 'shared-key');
    expect(theirs.id).not.toBe(mine.id);
  });
});

describe('get', () => {
  it("answers NOT_FOUND for unknown ids, non-generation ids and another workspace's generation", async () => {
    const view = await stack.generations.create(principal, { templateId, variables: {}, format: 'pdf' });
    const stranger = { ...principal, workspaceId: await stack.workspace() };
    for (const [who, id] of [
      [principal, 'gen_000000000000000000000000'],
      [principal, 'tpl_000000000000000000000000'],
      [principal, 'nonsense'],
      [stranger, view.id],
    ] as const) {
      expect((await domainError(stack.generations.get(who, id))).code).toBe('NOT_FOUND');
    }
    expect((await stack.generations.get(principal, view.id)).id).toBe(view.id);
  });

  it('mints an outputUrl for COMPLETED generations only, valid for an hour', async () => {
    const view = await stack.generations.create(principal, { templateId, variables: {}, format: 'pdf' });
    const id = parseId('generation', view.id)!;
    const { generations } = stack.repositories;
    const claimed = await generations.claim(id, 'worker-1', 30_000);
    expect(claimed?.status).toBe('PROCESSING');
    expect((await stack.generations.get(principal, view.id)).outputUrl).toBeNull();
    await generations.complete(id, 'worker-1', 'workspaces/x/generations/y.pdf', 1);
    const done = await stack.generations.get(principal, view.id);
    expect(done).toMatchObject({ status: 'COMPLETED', templateVersion: 1, error: null });
    expect(done.outputUrl).toBe(
      `https://objects.test/workspaces/x/generations/y.pdf?expires=${OUTPUT_URL_TTL_SECONDS}`,
    );
  });
});

describe('list', () => {
  it('pages newest first with tokens bound to the filters', async () => {
    const ws = await stack.workspace();
    const who = { ...principal, workspaceId: ws };
    const tpl = await stack.template(ws);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push((await stack.generations.create(who, { templateId: tpl, variables: { i }, format: 'pdf' })).id);

    const first = await stack.generations.list(who, { pageSize: 2 });
    expect(first.generations.map((g) => g.id)).toEqual([ids[4], ids[3]]);
    expect(first.nextPageToken).toEqual(expect.any(String));
    const second = await stack.generations.list(who, { pageSize: 2, pageToken: first.nextPageToken! });
    const third = await stack.generations.list(who, { pageSize: 2, pageToken: second.nextPageToken! });
    expect([...second.generations, ...third.generations].map((g) => g.id)).toEqual([ids[2], ids[1], ids[0]]);
    expect(third.nextPageToken).toBeNull();

    const withOtherFilter = await domainError(
      stack.generations.list(who, { pageSize: 2, pageToken: first.nextPageToken!, status: 'PENDING' }),
    );
    expect(withOtherFilter.code).toBe('VALIDATION_ERROR');
    const inOtherWorkspace = await domainError(
      stack.generations.list(principal, { pageSize: 2, pageToken: first.nextPageToken! }),
    );
    expect(inOtherWorkspace.code).toBe('VALIDATION_ERROR');
  });

  it('filters by status and template, and refuses bad filters', async () => {
    const ws = await stack.workspace();
    const who = { ...principal, workspaceId: ws };
    const a = await stack.template(ws, { name: 'A' });
    const b = await stack.template(ws, { name: 'B' });
    await stack.generations.create(who, { templateId: a, variables: {}, format: 'pdf' });
    const fromB = await stack.generations.create(who, { templateId: b, variables: {}, format: 'pdf' });
    expect((await stack.generations.list(who, { templateId: b })).generations.map((g) => g.id)).toEqual([fromB.id]);
    expect((await stack.generations.list(who, { templateId: 'not-a-template' })).generations).toEqual([]);
    expect((await stack.generations.list(who, { status: 'COMPLETED' })).generations).toEqual([]);
    expect((await stack.generations.list(who, { status: 'PENDING' })).generations).toHaveLength(2);
    for (const input of [{ pageSize: -1 }, { pageSize: 1.5 }, { status: 'DONE' }, { templateId: '' }]) {
      expect((await domainError(stack.generations.list(who, input))).code, JSON.stringify(input)).toBe(
        'VALIDATION_ERROR',
      );
    }
  });
});
