// `docgen serve --role api|render|webhooks|all`: one production process. Configuration comes
// from DOCGEN_* variables; a bad one stops the process with a message naming the fix.
// SIGTERM: stop taking work, finish or hand back in-flight work, exit within the grace period.
import { buildApp, type App, type BuildAppOptions } from '../app/build-app.ts';
import { ALL_ROLES, ConfigError, loadConfig, type Role } from '../config/config.ts';
import { createLogger } from '../ops/logger.ts';
import { createShutdownCoordinator } from '../ops/shutdown.ts';
import { describeError } from '../domain/errors.ts';
import { startTracing, type Tracing } from '../ops/tracing.ts';

export function parseRoles(argv: string[]): Role[] | string {
  const roles: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--role' || arg === '--roles') roles.push(...(argv[++i] ?? '').split(','));
    else if (arg.startsWith('--role=')) roles.push(...arg.slice('--role='.length).split(','));
    else return `unknown argument ${JSON.stringify(arg)}`;
  }
  if (roles.length === 0) return 'missing --role (api, render, webhooks or all)';
  const expanded = roles.flatMap((r) => (r.trim() === 'all' ? [...ALL_ROLES] : [r.trim()]));
  const bad = expanded.filter((r) => !(ALL_ROLES as readonly string[]).includes(r));
  if (bad.length > 0) return `unknown role ${JSON.stringify(bad[0])}: use api, render, webhooks or all`;
  return [...new Set(expanded)] as Role[];
}

/** Seams of the composition root a caller may fill (the crash tests inject faults here). */
export type ServeHooks = Pick<BuildAppOptions, 'afterGenerationInsert' | 'afterBatchInsert'>;

export async function runServe(argv: string[], hooks: ServeHooks = {}): Promise<number> {
  const roles = parseRoles(argv);
  if (typeof roles === 'string') {
    process.stderr.write(`docgen serve: ${roles}\n`);
    return 2;
  }
  let config;
  try {
    config = loadConfig({ ...process.env, DOCGEN_ROLES: roles.join(',') });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
  const logger = createLogger({ level: config.logLevel, role: roles.join(',') });
  let tracing: Tracing;
  try {
    tracing = await startTracing({ serviceName: `docgen-${roles.join('-')}`, logger });
  } catch (err) {
    process.stderr.write(`docgen could not start: ${describeError(err)}\n`);
    return 1;
  }
  // Installed before start-up: a SIGTERM while NATS or MongoDB is still awaited stops the wait.
  const shutdown = createShutdownCoordinator({ graceMs: config.shutdownGraceMs, logger });
  const startup = new AbortController();
  let app: App | undefined;
  shutdown.register(
    'abort start-up',
    () => startup.abort(new Error('shutting down during start-up')),
    'stop-accepting',
  );
  shutdown.register('stop accepting work', () => app?.stopAccepting(), 'stop-accepting');
  shutdown.register('drain in-flight work', (ctx) => app?.drain(ctx.signal), 'drain');
  shutdown.register('close connections', () => app?.close(), 'close');
  shutdown.register('export the last spans', () => tracing.shutdown(), 'final');
  shutdown.install();
  try {
    app = await buildApp(config, { ...hooks, logger, signal: startup.signal });
  } catch (err) {
    // Stopped by a signal while starting: the coordinator exits once its stoppers ran.
    if (startup.signal.aborted) return -1;
    shutdown.uninstall();
    logger.error('docgen could not start', { err: describeError(err) });
    process.stderr.write(`docgen could not start: ${describeError(err)}\n`);
    return 1;
  }
  const started = app;
  // A bug that escapes every handler still gets an orderly shutdown: in-flight work is
  // handed back instead of being lost with the process.
  const fatal = (kind: string) => (err: unknown) => {
    logger.error(`fatal ${kind}; shutting down`, { err: describeError(err) });
    void shutdown.shutdown(`fatal ${kind}`);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
  logger.info('docgen started', {
    roles,
    publicPort: started.publicPort,
    adminPort: started.adminPort,
    opsPort: started.opsPort,
  });
  return -1;
}
