// `docgen serve --role api|render|webhooks|all`: one production process. Configuration comes
// from DOCGEN_* variables; a bad one stops the process with a message naming the fix.
// SIGTERM: stop taking work, finish or hand back in-flight work, exit within the grace period.
import { buildApp, type BuildAppOptions } from '../app/build-app.ts';
import { ALL_ROLES, ConfigError, loadConfig, type Role } from '../config/config.ts';
import { createLogger } from '../ops/logger.ts';
import { createShutdownCoordinator } from '../ops/shutdown.ts';
import { describeError } from '../domain/errors.ts';

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
export type ServeHooks = Pick<BuildAppOptions, 'afterGenerationInsert'>;

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
  let app;
  try {
    app = await buildApp(config, { ...hooks, logger });
  } catch (err) {
    logger.error('docgen could not start', { err: describeError(err) });
    process.stderr.write(`docgen could not start: ${describeError(err)}\n`);
    return 1;
  }
  const started = app;
  const shutdown = createShutdownCoordinator({ graceMs: config.shutdownGraceMs, logger });
  shutdown.register('stop accepting work', () => started.stopAccepting(), 'stop-accepting');
  shutdown.register('drain in-flight work', (ctx) => started.drain(ctx.signal), 'drain');
  shutdown.register('close connections', () => started.close(), 'close');
  shutdown.install();
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
