// The embedded stack a benchmark runs against: the MongoDB stand-in (in memory), nats-server
// and s3rver in this process's control, and docgen itself as a child process with the roles
// asked for, so that load generation does not share docgen's event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startEmbeddedMongo } from '../../src/dev/embedded-mongo.ts';
import { startEmbeddedNats, type EmbeddedNats } from '../../src/dev/embedded-nats.ts';
import { startEmbeddedS3, type EmbeddedS3 } from '../../src/dev/embedded-s3.ts';
import { docgenChromiumNoSandbox } from './measure.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The environment of a docgen process on an embedded stack (bench and chaos scripts): the
 * caller's environment without any DOCGEN_ variable (nor those of `strip`), loopback listeners
 * on free ports, the stack's addresses, and rate limits out of the way.
 */
export function embeddedStackEnv(stack: {
  mongoUrl: string;
  database: string;
  natsUrl: string;
  s3: Pick<EmbeddedS3, 'endpoint' | 'accessKey' | 'secretKey' | 'region'>;
  adminToken: string;
  strip?: string[];
}): Record<string, string> {
  const strip = ['DOCGEN_', ...(stack.strip ?? [])];
  return {
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        (e): e is [string, string] => !strip.some((p) => e[0].startsWith(p)) && e[1] !== undefined,
      ),
    ),
    DOCGEN_PUBLIC_ADDR: '127.0.0.1:0',
    DOCGEN_ADMIN_ADDR: '127.0.0.1:0',
    DOCGEN_OPS_ADDR: '127.0.0.1:0',
    DOCGEN_ADMIN_TOKEN: stack.adminToken,
    DOCGEN_CHROMIUM_NO_SANDBOX: String(docgenChromiumNoSandbox()),
    DOCGEN_SECRET_KEY: randomBytes(32).toString('hex'),
    DOCGEN_MONGODB_URL: stack.mongoUrl,
    DOCGEN_MONGODB_DATABASE: stack.database,
    DOCGEN_NATS_URL: stack.natsUrl,
    DOCGEN_S3_ENDPOINT: stack.s3.endpoint,
    DOCGEN_S3_ACCESS_KEY: stack.s3.accessKey,
    DOCGEN_S3_SECRET_KEY: stack.s3.secretKey,
    DOCGEN_S3_REGION: stack.s3.region,
    DOCGEN_S3_BUCKET: 'docgen',
    DOCGEN_RATE_LIMIT_PER_SECOND: '1000000',
    DOCGEN_RATE_LIMIT_BURST: '1000000',
  };
}

export interface BenchStack {
  dir: string;
  child: ChildProcess;
  publicPort: number;
  adminPort: number;
  /** Health and Prometheus metrics (/metrics). */
  opsPort: number;
  adminToken: string;
  mongoUrl: string;
  database: string;
  nats: EmbeddedNats;
  s3: EmbeddedS3;
  /** Stops docgen, then the dependencies, and removes the data directory. */
  stop(): Promise<void>;
}

export async function startBenchStack(options: {
  roles: string;
  env?: Record<string, string>;
  label: string;
}): Promise<BenchStack> {
  const dir = mkdtempSync(join(tmpdir(), `docgen-${options.label}-`));
  const adminToken = randomBytes(16).toString('hex');
  const stops: (() => Promise<unknown>)[] = [];
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child!.once('exit', resolve));
    }
    for (const s of stops.reverse()) await s().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    process.stderr.write('starting the embedded stack (MongoDB stand-in in memory, nats-server, s3rver)…\n');
    const mongo = await startEmbeddedMongo();
    stops.push(() => mongo.stop());
    const nats = await startEmbeddedNats({ storeDir: join(dir, 'nats') });
    stops.push(() => nats.stop());
    const s3 = await startEmbeddedS3({ directory: join(dir, 's3'), buckets: ['docgen'] });
    stops.push(() => s3.stop());
    const database = 'docgen_bench';
    const env: Record<string, string> = {
      ...embeddedStackEnv({ mongoUrl: mongo.url, database, natsUrl: nats.url, s3, adminToken }),
      DOCGEN_LOG_LEVEL: 'warn',
      ...options.env,
    };
    // docgen serve, with the Node that runs this benchmark (Node 24).
    const started = spawn(process.execPath, [join(REPO_ROOT, 'bin', 'docgen.js'), 'serve', '--role', options.roles], {
      env: { ...env, DOCGEN_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child = started;
    const ports = await new Promise<{ publicPort: number; adminPort: number; opsPort: number }>((resolve, reject) => {
      let buffered = '';
      started.stdout!.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (line.includes('"docgen started"'))
            resolve(JSON.parse(line) as { publicPort: number; adminPort: number; opsPort: number });
          else if (/"level":"(warn|error)"/.test(line)) process.stderr.write(`docgen: ${line}\n`);
        }
      });
      started.once('exit', (code) => reject(new Error(`docgen exited with code ${code} before it started`)));
    });
    return { dir, child: started, ...ports, adminToken, mongoUrl: mongo.url, database, nats, s3, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
