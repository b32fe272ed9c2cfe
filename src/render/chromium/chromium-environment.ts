// Chromium's environment: a few named variables it needs, never the service's own. Chromium parses
// tenant-controlled HTML, CSS, SVG and fonts; a renderer that escaped its walls (or ran without its
// sandbox) could read /proc/self/environ, and docgen's environment holds DOCGEN_SECRET_KEY, the
// MongoDB URL with its password and the S3 secret key. The Liquid workers get an empty one.

/** Passed through when the service has them: where to find programs, the profile's and temporary
 * files' homes, fontconfig's configuration and caches, and the locale Chromium formats with. */
const PASSED_THROUGH = [
  'PATH',
  'HOME',
  'TMPDIR',
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_DATA_DIRS',
  'XDG_RUNTIME_DIR',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
  'FONTCONFIG_SYSROOT',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_NUMERIC',
  'LC_TIME',
  'LC_COLLATE',
  'LC_MONETARY',
  'LC_MESSAGES',
  'LC_PAPER',
  'LC_MEASUREMENT',
  'TZ',
] as const;

/** Used when the service has no PATH (Chromium's helpers look a few programs up). */
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

export interface ChromiumEnvironmentInput {
  /** FONTCONFIG_FILE docgen chose (DOCGEN_CHROMIUM_FONTCONFIG); null: whatever the service has. */
  fontconfigFile: string | null | undefined;
  /** The environment to pick from (default: this process's). */
  from?: Readonly<Record<string, string | undefined>>;
}

/** The whole environment Chromium starts with. */
export function chromiumEnvironment(input: ChromiumEnvironmentInput): Record<string, string> {
  const from = input.from ?? process.env;
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = from[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  if (input.fontconfigFile) env.FONTCONFIG_FILE = input.fontconfigFile;
  return env;
}

/** The names Chromium may receive (docs and tests). */
export const CHROMIUM_ENVIRONMENT_NAMES: readonly string[] = PASSED_THROUGH;
