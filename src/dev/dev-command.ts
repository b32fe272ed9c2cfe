// `docgen dev`: the whole service on its embedded default (docs/interface.md#running-docgen). It starts the
// MongoDB stand-in (in process), nats-server (child process) and an S3 server (in process),
// all with data under ./.docgen/ so a restart loses nothing, then every role in this
// process, seeds a workspace, an API key and a published sample template on first start, and
// prints a banner with a working curl line. SIGINT/SIGTERM stop everything it started.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildApp, type App } from '../app/build-app.ts';
import { DEV_ADMIN_TOKEN } from '../cli/admin/admin-client.ts';
import { ConfigError, loadConfig } from '../config/config.ts';
import { createLogger } from '../ops/logger.ts';
import { startEmbeddedMongo, type EmbeddedMongo } from './embedded-mongo.ts';
import { startEmbeddedNats, type EmbeddedNats } from './embedded-nats.ts';
import { startEmbeddedS3, type EmbeddedS3 } from './embedded-s3.ts';
import { seedDevData, type DevSeed } from './dev-seed.ts';
import { devOwnerInvitation, type DevOwner } from './dev-portal-owner.ts';
import { describeError } from '../domain/errors.ts';

const DEV_BUCKET = 'docgen';

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
    process.stdout.write('Usage: docgen dev\n  Runs docgen with embedded MongoDB stand-in, NATS and S3; data in ./.docgen (DOCGEN_DATA_DIR).\n');
    return 0;
  }
  const dataDir = path.resolve(process.env.DOCGEN_DATA_DIR ?? '.docgen');
  mkdirSync(dataDir, { recursive: true });
  const logger = createLogger({ level: (process.env.DOCGEN_LOG_LEVEL as 'info') ?? 'info', role: 'dev' });

  const stack: Partial<DevStack> = {};
  let app: App | undefined;
  let stopping: Promise<void> | undefined;
  const stopAll = () => {
    stopping ??= (async () => {
      await app?.close().catch((err: unknown) => logger.warn('error while stopping docgen', { err: describeError(err) }));
      await stack.nats?.stop().catch(() => {});
      await stack.s3?.stop().catch(() => {});
      await stack.mongo?.stop().catch(() => {});
    })();
    return stopping;
  };
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    logger.info('stopping docgen dev', { signal });
    void stopAll().then(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    stack.mongo = await startEmbeddedMongo({
      dataDir: path.join(dataDir, 'mongo'),
      onLargeCollection: ({ collection, documents }) =>
        logger.warn(
          'the embedded MongoDB stand-in answers every query by scanning its collection, and this one has grown past the size where each query takes 20 ms or more; ' +
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
      DOCGEN_ADMIN_TOKEN: DEV_ADMIN_TOKEN,
      DOCGEN_WEBHOOK_ALLOW_INSECURE_URLS: 'true',
      DOCGEN_SHUTDOWN_GRACE_MS: '5000',
      ...process.env,
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
    app = await buildApp(config, { logger });
    const seed = await seedDevData(app, path.join(dataDir, 'dev-seed.json'));
    const owner = await devOwnerInvitation(app, seed.workspaceId);
    process.stdout.write(banner(app, seed, owner, dataDir));
    return -1; // keep running until a signal
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`${err.message}\n`);
    else process.stderr.write(`docgen dev could not start: ${describeError(err)}\n`);
    await stopAll();
    return 1;
  }
}

function banner(app: App, seed: DevSeed, owner: DevOwner, dataDir: string): string {
  const base = `http://127.0.0.1:${app.publicPort}`;
  const body = JSON.stringify({ templateId: seed.templateId, variables: seed.sampleVariables });
  return `
docgen dev is ready
  public API (REST /v1, Connect, gRPC)  ${base}
  admin API (docgen admin …)            http://127.0.0.1:${app.adminPort}   token: ${app.config.adminToken}
  health and metrics                    http://127.0.0.1:${app.opsPort}/readyz  /metrics
  data                                  ${dataDir}

  workspace id        ${seed.workspaceId}
  API key             ${seed.apiKey}
  sample template id  ${seed.templateId}   (published invoice)
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
