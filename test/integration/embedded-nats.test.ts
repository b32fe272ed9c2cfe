// The embedded nats-server of `docgen dev`: start/stop/kill/restart on the same port and
// store, and no server outliving the process that started it.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startEmbeddedNats, type EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { runDir, uniqueRunDir } from '../harness/dependencies.ts';
import { pollUntil } from '../harness/poll-until.ts';
import { SPAWNED_BY_ENV } from '../harness/run-dir-processes.ts';

const NODE_24 = fileURLToPath(new URL('../../node_modules/.bin/node', import.meta.url));
const CHILD = fileURLToPath(new URL('./fixtures/embedded-nats-child.ts', import.meta.url));

const started: EmbeddedNats[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((n) => n.stop()));
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function streamMessages(url: string, stream: string): Promise<number> {
  const nc = await connect({ servers: [url] });
  try {
    const jsm = await jetstreamManager(nc);
    return (await jsm.streams.info(stream)).state.messages;
  } finally {
    await nc.close();
  }
}

describe('embedded nats-server', () => {
  it('serves JetStream and keeps streams across stop/start and a SIGKILL, on the same port', async () => {
    const nats = await startEmbeddedNats({ storeDir: uniqueRunDir('nats-embedded') });
    started.push(nats);
    const port = nats.port;
    expect(nats.url).toBe(`nats://127.0.0.1:${port}`);
    expect(nats.running).toBe(true);

    const nc = await connect({ servers: [nats.url] });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'KEEP', subjects: ['keep.>'] });
    const js = jsm.jetstream();
    await js.publish('keep.a', 'one');
    await js.publish('keep.b', 'two');
    await nc.close();

    await nats.restart();
    expect(nats.port).toBe(port);
    expect(await streamMessages(nats.url, 'KEEP')).toBe(2);

    const pid = nats.pid!;
    await nats.kill('SIGKILL');
    expect(alive(pid)).toBe(false);
    expect(nats.running).toBe(false);
    expect(nats.pid).toBeUndefined();
    await nats.restart();
    expect(await streamMessages(nats.url, 'KEEP')).toBe(2);

    await nats.stop();
    expect(nats.running).toBe(false);
    await nats.stop(); // stopping a stopped server is fine
  });

  it('says why it could not start, with the server log', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const address = blocker.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      await expect(
        startEmbeddedNats({ storeDir: uniqueRunDir('nats-busy'), port, startTimeoutMs: 5_000 }),
      ).rejects.toThrow(new RegExp(`nats-server on 127.0.0.1:${port}.*exited[\\s\\S]*address already in use`));
    } finally {
      blocker.close();
    }
  });

  for (const ending of ['sigkill', 'exit', 'throw'] as const) {
    it(`does not outlive its parent (parent ends by ${ending})`, async () => {
      const child = spawn(NODE_24, [CHILD, uniqueRunDir('nats-orphan'), ending === 'sigkill' ? 'wait' : ending], {
        env: { ...process.env, [SPAWNED_BY_ENV]: runDir() },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', () => {});
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const line = await pollUntil(() => out.split('\n').find((l) => l.startsWith('{')), Boolean, {
        timeoutMs: 20_000,
        description: 'child prints the nats-server pid',
      });
      const { pid } = JSON.parse(line!) as { pid: number };
      if (ending === 'sigkill') expect(alive(pid)).toBe(true);
      if (ending === 'sigkill') child.kill('SIGKILL');
      await exited;
      // exit/throw: killed by the exit hook at once; SIGKILL: by the watchdog within ~1 s.
      await pollUntil(() => !alive(pid), Boolean, {
        timeoutMs: 8_000,
        description: `nats-server ${pid} gone after its parent ended`,
      });
    });
  }
});
