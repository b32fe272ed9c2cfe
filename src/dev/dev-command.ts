// `docgen dev`: the whole service on its embedded default (docs/interface.md#running-docgen). It starts the
// MongoDB stand-in (in process), nats-server (child process) and an S3 server (in process),
// all with data under ./.docgen/ so a restart loses nothing, then every role in this
// process, seeds a workspace, an API key and a published sample template on first start, and
// prints a banner with a working curl line. SIGINT/SIGTERM stop everything it started.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildApp, type App } from '../app/build-app.ts';
import { describeError } from '../domain/errors.ts';
import { createShutdownCoordinator } from '../ops/shutdown.ts';
import { startTracing, type Tracing } from '../ops/tracing.ts';
import { ConfigError, loadConfig } from '../config/config.ts';
import { createLogger } from '../ops/logger.ts';
import { startEmbeddedMongo, type EmbeddedMongo } from './embedded-mongo.ts';
import { startEmbeddedNats, type EmbeddedNats } from './embedded-nats.ts';
import { startEmbeddedS3, type EmbeddedS3 } from './embedded-s3.ts';
import { seedDevData, type DevSeed } from './dev-seed.ts';
import { devOwnerInvitation, type DevOwner } from './dev-portal-owner.ts';
import { devDataDir, DEV_ADMIN_TOKEN_FILE, startDevAdminToken } from './dev-admin-token.ts';

const DEV_BUCKET = 'docgen';
/** Default DOCGEN_SHUTDOWN_GRACE_MS of `docgen dev`: Ctrl+C should not keep a developer waiting. */
const DEV_SHUTDOWN_GRACE_MS = 5000;

interface DevStack {
  mongo: EmbeddedMongo;
  nats: EmbeddedNats;
  s3: EmbeddedS3;
}

function devSecretKey(dataDir: string): string {
  // Persisted so that webhook secrets encrypted in an earlier run still decrypt.
  const file = path.join(dataDir, 'secret-key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

export async function runDev(argv: string[]): Promise<number> {
  if (argv.includes('--help')) {
    process.stdout.write(
      'Usage: docgen dev\n  Runs docgen with embedded MongoDB stand-in, NATS and S3; data in ./.docgen (DOCGEN_DATA_DIR).\n',
    );
    return 0;
  }
  const dataDir = devDataDir(process.env);
  mkdirSync(dataDir, { recursive: true });
  const logger = createLogger({ level: (process.env.DOCGEN_LOG_LEVEL as 'info') ?? 'info', role: 'dev' });

  let tracing: Tracing;
  try {
    tracing = await startTracing({ serviceName: 'docgen-dev', logger });
  } catch (err) {
    process.stderr.write(`docgen dev could not start: ${describeError(err)}\n`);
    return 1;
  }
  const stack: Partial<DevStack> = {};
  let app: App | undefined;
  // The same coordinator as `docgen serve`; the embedded dependencies stop after docgen.
  let graceMs = DEV_SHUTDOWN_GRACE_MS;
  const shutdown = createShutdownCoordinator({ graceMs: () => graceMs, logger });
  const startup = new AbortController();
  shutdown.register(
    'abort start-up',
    () => startup.abort(new Error('shutting down during start-up')),
    'stop-accepting',
  );
  shutdown.register('stop accepting work', () => app?.stopAccepting(), 'stop-accepting');
  shutdown.register('drain in-flight work', (ctx) => app?.drain(ctx.signal), 'drain');
  shutdown.register('close docgen', () => app?.close(), 'close');
  shutdown.register('stop embedded dependencies', () => stopStack(stack), 'final');
  shutdown.register('export the last spans', () => tracing.shutdown(), 'final');
  shutdown.install();

  try {
    stack.mongo = await startEmbeddedMongo({
      dataDir: path.join(dataDir, 'mongo'),
      onLargeCollection: ({ collection, documents }) =>
        logger.warn(
          'the embedded MongoDB stand-in answers every query that is not by _id by scanning its collection, and this one has grown past the size where each such query takes 5 to 20 ms or more; ' +
            'docgen dev is for development: for real data run docgen on a real MongoDB (one machine: deploy/compose/compose.yaml, see docs/deploy.md)',
          { collection, documents },
        ),
    });
    stack.nats = await startEmbeddedNats({ storeDir: path.join(dataDir, 'nats'), watchParent: true });
    stack.s3 = await startEmbeddedS3({ directory: path.join(dataDir, 's3'), buckets: [DEV_BUCKET] });

    const env: Record<string, string | undefined> = {
      DOCGEN_ROLES: 'api,render,webhooks',
      DOCGEN_PUBLIC_ADDR: '127.0.0.1:8080',
      DOCGEN_ADMIN_ADDR: '127.0.0.1:8081',
      DOCGEN_OPS_ADDR: '127.0.0.1:8082',
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      // As root Chromium never has a sandbox; on a developer's machine dev runs it without one
      // (warned about at start) rather than refusing. Elsewhere dev keeps the sandbox.
      DOCGEN_CHROMIUM_NO_SANDBOX: String(process.getuid?.() === 0),
      DOCGEN_SHUTDOWN_GRACE_MS: String(DEV_SHUTDOWN_GRACE_MS),
      ...process.env,
      // A new random token every start unless one is set (src/dev/dev-admin-token.ts).
      DOCGEN_ADMIN_TOKEN: startDevAdminToken(dataDir, process.env),
      // The embedded dependencies always win: they are what `dev` means.
      DOCGEN_SECRET_KEY: process.env.DOCGEN_SECRET_KEY ?? devSecretKey(dataDir),
      DOCGEN_MONGODB_URL: stack.mongo.url,
      DOCGEN_MONGODB_DATABASE: 'docgen',
      DOCGEN_NATS_URL: `nats://127.0.0.1:${stack.nats.port}`,
      DOCGEN_S3_ENDPOINT: stack.s3.endpoint,
      DOCGEN_S3_PUBLIC_ENDPOINT: stack.s3.endpoint,
      DOCGEN_S3_ACCESS_KEY: stack.s3.accessKey,
      DOCGEN_S3_SECRET_KEY: stack.s3.secretKey,
      DOCGEN_S3_BUCKET: DEV_BUCKET,
      DOCGEN_S3_REGION: stack.s3.region,
    };
    const config = loadConfig(env);
    graceMs = config.shutdownGraceMs;
    app = await buildApp(config, { logger, signal: startup.signal });
    const seed = await seedDevData(app, path.join(dataDir, 'dev-seed.json'));
    const owner = await devOwnerInvitation(app, seed.workspaceId);
    process.stdout.write(banner(app, seed, owner, dataDir));
    return -1; // keep running until a signal
  } catch (err) {
    // Stopped by a signal while starting: the coordinator exits once its stoppers ran.
    if (startup.signal.aborted) return -1;
    shutdown.uninstall();
    if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
    else process.stderr.write(`docgen dev could not start: ${describeError(err)}\n`);
    await app?.close().catch(() => {});
    await stopStack(stack);
    return 1;
  }
}

async function stopStack(stack: Partial<DevStack>): Promise<void> {
  await stack.nats?.stop().catch(() => {});
  await stack.s3?.stop().catch(() => {});
  await stack.mongo?.stop().catch(() => {});
}

function banner(app: App, seed: DevSeed, owner: DevOwner, dataDir: string): string {
  const base = `http://127.0.0.1:${app.publicPort}`;
  const body = JSON.stringify({ templateId: seed.templateId, variables: seed.sampleVariables });
  return `
docgen dev is ready
  public API (REST /v1, Connect, gRPC)  ${base}
  admin API (docgen admin …)            http://127.0.0.1:${app.adminPort}   token: ${app.config.adminToken}
                                        (new each start; \`docgen admin\` reads it from ${path.join(dataDir, DEV_ADMIN_TOKEN_FILE)})
  health and metrics                    http://127.0.0.1:${app.opsPort}/readyz  /metrics
  data                                  ${dataDir}

  workspace id        ${seed.workspaceId}
  API key             ${seed.apiKey}
  sample template id  ${seed.templateId}   (published invoice)
  e-invoice template  ${seed.eInvoiceTemplateId ?? '-'}   (published E-invoice (Factur-X EN 16931): PDF/A-3b with factur-x.xml)
${ownerLines(owner)}

Try it:
  curl -s -X POST ${base}/v1/generations \\
    -H 'Authorization: Bearer ${seed.apiKey}' -H 'Content-Type: application/json' \\
    -d '${body.replace(/'/g, "'\\''")}'
  curl -s ${base}/v1/generations/GENERATION_ID -H 'Authorization: Bearer ${seed.apiKey}'

Press Ctrl+C to stop.
`;
}

function ownerLines(owner: DevOwner): string {
  if (owner.inviteUrl) {
    return `  portal invite link  ${owner.inviteUrl}
                      (owner of the workspace: sets the password of ${owner.email}; single use, 72 h)`;
  }
  return `  portal sign-in      ${owner.portalUrl}/   as ${owner.email} (password already set;
                      \`docgen admin user reset ${owner.userId}\` prints a new link)`;
}
