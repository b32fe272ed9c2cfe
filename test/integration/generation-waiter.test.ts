// The waiter behind `Prefer: wait` against a real nats-server: final events published the way
// the render pipeline publishes them wake exactly the requests waiting for that generation;
// each wait reads the row once after registering and once when woken (never in a loop); a
// deadline, a caller that went away and a stopping process each end the wait.
import { randomBytes } from 'node:crypto';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenerationWaiter, natsFinalEventSource } from '../../src/api/generation-waiter.ts';
import type { EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { formatId } from '../../src/domain/ids.ts';
import { createDocgenQueue, type DocgenQueue } from '../../src/queue/docgen-queue.ts';
import { connectNats, type NatsQueue } from '../../src/queue/jetstream.ts';
import type { FinalEventName } from '../../src/queue/messages.ts';
import { startNats } from '../harness/dependencies.ts';

let nats: EmbeddedNats;
let queue: NatsQueue;
let events: DocgenQueue;
let waiter: GenerationWaiter;

beforeAll(async () => {
  nats = await startNats();
  queue = await connectNats({
    servers: [nats.url],
    streamPrefix: `T${randomBytes(3).toString('hex').toUpperCase()}`,
    name: 'docgen-test',
  });
  await queue.ensureStreams();
  events = createDocgenQueue(queue);
  waiter = await GenerationWaiter.start(natsFinalEventSource(queue.connection, queue.prefix));
});

afterAll(async () => {
  waiter?.close();
  await queue?.close();
  await nats?.stop();
});

const newId = () => formatId('generation', new ObjectId());

function publishFinal(generationId: string, event: FinalEventName = 'generation.completed') {
  return events.publishFinalEvent({
    eventId: formatId('event', new ObjectId()),
    event,
    generationId,
    workspaceId: formatId('workspace', new ObjectId()),
    timestamp: Math.floor(Date.now() / 1000),
    ...(event === 'generation.failed' ? { error: 'broken' } : {}),
  });
}

/** A stored row as the waiter re-reads it: counts reads, answers `status()` at each. */
function row(id: string, status: () => string) {
  const reads = { count: 0 };
  const reread = async () => {
    reads.count++;
    return { id, status: status() };
  };
  return { reads, reread };
}

describe('GenerationWaiter', () => {
  it('a final event wakes the waiter, which reads the row once more and answers', async () => {
    const id = newId();
    let status = 'PENDING';
    const { reads, reread } = row(id, () => status);
    const started = performance.now();
    const waiting = waiter.waitForFinal({ id, status: 'PENDING' }, 20_000, reread);
    setTimeout(() => {
      status = 'COMPLETED';
      void publishFinal(id);
    }, 300);
    const result = await waiting;
    expect(result).toEqual({ id, status: 'COMPLETED' });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(reads.count).toBe(2); // after registering, after the event: no polling
    expect(waiter.size).toBe(0);
  });

  it('answers at once when the row is final by the time the waiter registered', async () => {
    const id = newId();
    const { reads, reread } = row(id, () => 'FAILED');
    const started = performance.now();
    expect(await waiter.waitForFinal({ id, status: 'PROCESSING' }, 20_000, reread)).toEqual({ id, status: 'FAILED' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(reads.count).toBe(1);
  });

  it('does not wait at all for a generation that is already final', async () => {
    const { reads, reread } = row('gen_x', () => 'PENDING');
    expect(await waiter.waitForFinal({ id: 'gen_x', status: 'COMPLETED' }, 20_000, reread)).toEqual({
      id: 'gen_x',
      status: 'COMPLETED',
    });
    expect(reads.count).toBe(0);
  });

  it("another generation's event does not wake it; the deadline does, with the state as it stands", async () => {
    const id = newId();
    const { reads, reread } = row(id, () => 'PROCESSING');
    const started = performance.now();
    const waiting = waiter.waitForFinal({ id, status: 'PENDING' }, 1_500, reread);
    await publishFinal(newId());
    await publishFinal(newId(), 'generation.failed');
    expect(await waiting).toEqual({ id, status: 'PROCESSING' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(reads.count).toBe(2);
  });

  it('wakes every request waiting for the same generation', async () => {
    const id = newId();
    let status = 'PENDING';
    const { reads, reread } = row(id, () => status);
    const waits = Array.from({ length: 25 }, () => waiter.waitForFinal({ id, status: 'PENDING' }, 20_000, reread));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(waiter.size).toBe(25);
    status = 'FAILED';
    await publishFinal(id, 'generation.failed');
    for (const result of await Promise.all(waits)) expect(result).toEqual({ id, status: 'FAILED' });
    expect(reads.count).toBe(50);
    expect(waiter.size).toBe(0);
  });

  it('a caller that went away ends its wait without another read', async () => {
    const id = newId();
    const { reads, reread } = row(id, () => 'PENDING');
    const gone = new AbortController();
    const waiting = waiter.waitForFinal({ id, status: 'PENDING' }, 20_000, reread, gone.signal);
    setTimeout(() => gone.abort(), 100);
    const started = performance.now();
    expect(await waiting).toEqual({ id, status: 'PENDING' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(reads.count).toBe(1);
    expect(waiter.size).toBe(0);
  });

  it('a failing re-read answers with the last state read instead of failing the create', async () => {
    const id = newId();
    const reread = async () => {
      throw new Error('database down');
    };
    expect(await waiter.waitForFinal({ id, status: 'PENDING' }, 300, reread)).toEqual({ id, status: 'PENDING' });
  });

  it('a re-read that fails after the event is tried again shortly, not left until the deadline', async () => {
    const id = newId();
    let status = 'PENDING';
    let failNext = false;
    let reads = 0;
    const reread = async () => {
      reads++;
      if (failNext) {
        failNext = false;
        throw new Error('database hiccup');
      }
      return { id, status };
    };
    const started = performance.now();
    const waiting = waiter.waitForFinal({ id, status: 'PENDING' }, 20_000, reread);
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = 'COMPLETED';
    failNext = true;
    await publishFinal(id);
    expect(await waiting).toEqual({ id, status: 'COMPLETED' });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(reads).toBe(3);
  });

  it('ignores messages on the event subjects that are not final events', async () => {
    const id = newId();
    const { reads, reread } = row(id, () => 'PENDING');
    const waiting = waiter.waitForFinal({ id, status: 'PENDING' }, 1_000, reread);
    const subject = `${queue.prefix.toLowerCase()}.events.generation.completed`;
    queue.connection.publish(subject, 'not json');
    queue.connection.publish(subject, JSON.stringify({ generationId: id }));
    expect(await waiting).toEqual({ id, status: 'PENDING' });
    expect(reads.count).toBe(2);
  });

  it('closing wakes every waiter (each answers with what it re-reads) and refuses new waits', async () => {
    const own = await GenerationWaiter.start(natsFinalEventSource(queue.connection, queue.prefix));
    const id = newId();
    const { reads, reread } = row(id, () => 'PROCESSING');
    const waits = [1, 2, 3].map(() => own.waitForFinal({ id, status: 'PENDING' }, 20_000, reread));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    own.close();
    for (const result of await Promise.all(waits)) expect(result).toEqual({ id, status: 'PROCESSING' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(reads.count).toBe(6);
    expect(await own.waitForFinal({ id, status: 'PENDING' }, 20_000, reread)).toBeUndefined();
  });
});
