// Which fontconfig file docgen's Chromium reads: DOCGEN_CHROMIUM_FONTCONFIG.
//   auto (default): the CJK everyday subsets `docgen fonts build` made in build/fonts/ (setup and the
//                   image build make them), else the system's configuration;
//   system:         the system's configuration (CJK text prints slower: by a fifth in the headless
//                   shell, two to three times in the full browser);
//   a path:         that fontconfig file, which must exist.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `docgen fonts build` writes by default, and where `auto` looks. */
export const DEFAULT_FONTS_DIR = fileURLToPath(new URL('../../../build/fonts', import.meta.url));
export const FONTCONFIG_FILE_NAME = 'fonts.conf';

export type FontconfigChoice =
  { ok: true; file: string | null; source: 'subsets' | 'system' | 'configured' } | { ok: false; problem: string };

export function resolveChromiumFontconfig(setting: string, fontsDir = DEFAULT_FONTS_DIR): FontconfigChoice {
  const value = setting.trim();
  if (value === 'system') return { ok: true, file: null, source: 'system' };
  if (value === '' || value === 'auto') {
    const built = join(fontsDir, FONTCONFIG_FILE_NAME);
    return existsSync(built)
      ? { ok: true, file: built, source: 'subsets' }
      : { ok: true, file: null, source: 'system' };
  }
  if (!value.startsWith('/')) {
    return {
      ok: false,
      problem: `DOCGEN_CHROMIUM_FONTCONFIG=${JSON.stringify(value)} is not valid. Use auto, system or an absolute path to a fontconfig file.`,
    };
  }
  if (!existsSync(value)) {
    return {
      ok: false,
      problem: `DOCGEN_CHROMIUM_FONTCONFIG=${value} does not exist. Build it with \`docgen fonts build --out ${dirname(value)}\`, or use auto or system.`,
    };
  }
  return { ok: true, file: value, source: 'configured' };
}
