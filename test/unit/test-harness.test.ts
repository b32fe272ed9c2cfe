// The harness helpers other tests lean on: pollUntil and the local HTTP receiver.
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startHttpReceiver, type HttpReceiver } from '../harness/http-receiver.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { runDir } from '../harness/dependencies.ts';
import { freePort } from '../harness/free-port.ts';

describe('pollUntil', () => {
  it('returns the first accepted value, treating throws as "not yet"', async () => {
    let calls = 0;
    const value = await pollUntil(
      () => {
        calls++;
        if (calls < 3) throw new Error('not ready');
        return calls;
      },
      (n) => n >= 4,
      { intervalMs: 5 },
    );
    expect(value).toBe(4);
  });

  it('times out with what it waited for, the last value and the last error', async () => {
    await expect(
      pollUntil(
        () => ({ status: 'PENDING' }),
        (v) => v.status === 'COMPLETED',
        { timeoutMs: 100, description: 'generation COMPLETED' },
      ),
    ).rejects.toThrow(
      /timed out after 100 ms .* waiting for: generation COMPLETED; last value: \{ status: 'PENDING' \}/,
    );
    await expect(
      pollUntil(
        () => {
          throw new Error('connection refused');
        },
        Boolean,
        { timeoutMs: 50 },
      ),
    ).rejects.toThrow(/last error: Error: connection refused/);
  });
});

describe('runDir and freePort', () => {
  it('gives directories under the run directory and a bindable port', async () => {
    expect(runDir('sub')).toBe(`${process.env.DOCGEN_TEST_RUN_DIR}/sub`);
    const port = await freePort();
    expect(port).toBeGreaterThan(0);
  });
});

describe('HTTP receiver', () => {
  let receiver: HttpReceiver;
  afterEach(async () => {
    await receiver?.close();
  });

  function send(path: string, body: Buffer, headers: Record<string, string> = {}) {
    return new Promise<{ status: number; body: string; error?: string }>((resolve) => {
      const req = request(
        `${receiver.url}${path}`,
        { method: 'POST', headers: { 'Content-Length': String(body.length), ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        },
      );
      req.on('error', (err) => resolve({ status: 0, body: '', error: err.message }));
      req.end(body);
    });
  }

  it('records raw bodies and headers as sent, and answers as scripted, in order', async () => {
    receiver = await startHttpReceiver();
    receiver.answerNext({ status: 500, body: 'boom' }, (req) => ({
      status: 201,
      body: `got ${req.body.length}`,
      headers: { 'X-Echo': req.header('x-signature') ?? '' },
    }));
    const raw = Buffer.from('{"b":1, "a":2}\n');
    const first = await send('/hook?x=1', raw, { 'X-Signature': 'sha256=abc', 'Content-Type': 'application/json' });
    const second = await send('/hook', Buffer.from([0, 255]));
    const third = await send('/hook', Buffer.from('x'));
    expect([first.status, second.status, third.status]).toEqual([500, 201, 200]);
    expect(second.body).toBe('got 2');
    const [r0, r1] = await receiver.waitForRequests(3);
    expect(r0).toMatchObject({ index: 0, method: 'POST', url: '/hook?x=1', path: '/hook' });
    expect(r0!.body.equals(raw)).toBe(true);
    expect(r0!.json()).toEqual({ b: 1, a: 2 });
    expect(r0!.header('X-Signature')).toBe('sha256=abc');
    expect(r0!.rawHeaders).toContain('X-Signature');
    expect(r1!.body).toEqual(Buffer.from([0, 255]));
  });

  it('delays, drops connections, and uses the fallback answer', async () => {
    receiver = await startHttpReceiver({ defaultAnswer: { status: 204 } });
    receiver.answerNext({ delayMs: 300, status: 200 }, { dropConnection: true });
    const started = Date.now();
    const slow = await send('/', Buffer.from('a'));
    expect(slow.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    const dropped = await send('/', Buffer.from('b'));
    expect(dropped.status).toBe(0);
    expect(dropped.error).toBeDefined();
    expect((await send('/', Buffer.from('c'))).status).toBe(204);
    receiver.answerOtherwise({ status: 410 });
    expect((await send('/', Buffer.from('d'))).status).toBe(410);
    expect(receiver.requests.map((r) => r.text())).toEqual(['a', 'b', 'c', 'd']);
    receiver.reset();
    expect(receiver.requests).toHaveLength(0);
  });

  it('closes promptly even while an answer is delayed', async () => {
    receiver = await startHttpReceiver();
    receiver.answerNext({ delayMs: 30_000 });
    const pending = send('/', Buffer.from('x'));
    await receiver.waitForRequests(1);
    const started = Date.now();
    await receiver.close();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await pending).status).toBe(0);
  });
});
