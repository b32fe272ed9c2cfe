// The shared listener answers a request before its body has arrived (a 413, a refusal) without
// resetting the connection under the client: with `Connection: close`, it closes only its
// sending side, reads and drops the rest of the body, and closes once the body is in.
import net from 'node:net';
import type http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDualProtocolServer, type DualProtocolServer } from '../../src/app/dual-protocol-server.ts';

let server: DualProtocolServer;

beforeAll(async () => {
  server = await startDualProtocolServer({ host: '127.0.0.1', port: 0 }, (_req, res) => {
    (res as http.ServerResponse).writeHead(413, { 'Content-Type': 'application/json' }).end('{"error":"too large"}');
  });
});

afterAll(async () => {
  await server?.close();
});

describe('dual-protocol server', () => {
  it('after an early answer to a client that asked to close, lets the body finish arriving instead of resetting the connection', async () => {
    // Half-open allowed: like an HTTP client still sending its body after the answer has ended.
    const socket = net.connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
    const received: Buffer[] = [];
    const errors: string[] = [];
    let serverEnded = false;
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.on('end', () => {
      serverEnded = true;
    });
    socket.on('error', (err) => errors.push(err.message));
    const closed = new Promise((r) => socket.once('close', r));
    const body = Buffer.alloc(1024 * 1024, 'x');
    socket.write(
      `POST /v1/generations HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${body.length * 2}\r\n\r\n`,
    );
    socket.write(body);
    const until = Date.now() + 5_000;
    while (!Buffer.concat(received).toString('latin1').includes('too large') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 10));
    const answer = Buffer.concat(received).toString('latin1');
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    // The answer is out and its end is marked; the rest of the body is still accepted.
    await new Promise((r) => setTimeout(r, 200));
    await new Promise<void>((resolve, reject) => socket.write(body, (err) => (err ? reject(err) : resolve())));
    socket.end();
    await closed;
    expect(serverEnded).toBe(true);
    expect(errors).toEqual([]);
  });
});
