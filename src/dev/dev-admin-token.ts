// The operator token of `docgen dev`: random on every start (unless DOCGEN_ADMIN_TOKEN is set,
// which is used as it is), printed in the banner and written to `<data dir>/admin-token`
// (mode 0600) so `docgen admin …` on the same machine finds it. A fixed, well-known token on
// 127.0.0.1 would let any web page that rebinds a name to loopback drive the admin API.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const DEV_ADMIN_TOKEN_FILE = 'admin-token';

/** `docgen dev`'s data directory: DOCGEN_DATA_DIR, or ./.docgen. */
export function devDataDir(env: Record<string, string | undefined>): string {
  return path.resolve(env.DOCGEN_DATA_DIR || '.docgen');
}

/** DOCGEN_ADMIN_TOKEN when set; otherwise a new random token, written for the CLI. */
export function startDevAdminToken(dataDir: string, env: Record<string, string | undefined>): string {
  if (env.DOCGEN_ADMIN_TOKEN) return env.DOCGEN_ADMIN_TOKEN;
  const token = `dev_${randomBytes(24).toString('base64url')}`;
  writeFileSync(path.join(dataDir, DEV_ADMIN_TOKEN_FILE), `${token}\n`, { mode: 0o600 });
  return token;
}

/** The token the last `docgen dev` start wrote, if any (the CLI's fallback). */
export function readDevAdminToken(env: Record<string, string | undefined>): string | undefined {
  try {
    return readFileSync(path.join(devDataDir(env), DEV_ADMIN_TOKEN_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
