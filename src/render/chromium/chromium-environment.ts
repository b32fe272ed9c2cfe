// Chromium's environment: a few named variables it needs, never the service's own
// (child-environment.ts). Chromium parses tenant-controlled HTML, CSS, SVG and fonts; a renderer
// that escaped its walls (or ran without its sandbox) could read /proc/self/environ.
import { BASE_ENVIRONMENT_NAMES, childEnvironment } from '../child-environment.ts';

/** Besides the base names: fontconfig's configuration and the XDG homes of its caches. */
export const CHROMIUM_ENVIRONMENT_NAMES: readonly string[] = [
  ...BASE_ENVIRONMENT_NAMES,
  'XDG_CACHE_HOME',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_DATA_DIRS',
  'XDG_RUNTIME_DIR',
  'FONTCONFIG_FILE',
  'FONTCONFIG_PATH',
  'FONTCONFIG_SYSROOT',
];

export interface ChromiumEnvironmentInput {
  /** FONTCONFIG_FILE docgen chose (DOCGEN_CHROMIUM_FONTCONFIG); null: whatever the service has. */
  fontconfigFile: string | null | undefined;
  /** The environment to pick from (default: this process's). */
  from?: Readonly<Record<string, string | undefined>>;
}

/** The whole environment Chromium starts with. */
export function chromiumEnvironment(input: ChromiumEnvironmentInput): Record<string, string> {
  const env = childEnvironment(CHROMIUM_ENVIRONMENT_NAMES, input.from);
  if (input.fontconfigFile) env.FONTCONFIG_FILE = input.fontconfigFile;
  return env;
}
