// The environment of the programs the render role starts (Chromium, qpdf, xmllint): named
// variables only, never the service's own. docgen's environment holds DOCGEN_SECRET_KEY, the
// MongoDB URL with its password and the S3 secret key; a program that parses tenant input
// (HTML, CSS, SVG, fonts, PDFs, XML) has no business seeing them.

/** Where to find programs, home and temporary directories, and the locale. */
export const BASE_ENVIRONMENT_NAMES = [
  'PATH',
  'HOME',
  'TMPDIR',
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

/** Used when the service has no PATH. */
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The named variables the service has (non-empty), and PATH in any case. */
export function childEnvironment(
  names: readonly string[] = BASE_ENVIRONMENT_NAMES,
  from: Readonly<Record<string, string | undefined>> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = from[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  return env;
}
