// `docgen fonts build [--out DIR] [--if-stale]`: the everyday subsets of the CJK fonts that
// Chromium prints with (src/render/fonts/). Setup and the image build run it; `auto` in DOCGEN_CHROMIUM_FONTCONFIG
// finds the result in build/fonts/.
import { resolve } from 'node:path';
import { DEFAULT_FONTS_DIR } from '../render/fonts/chromium-fontconfig.ts';
import {
  buildCjkSubsets,
  cjkSubsetsUpToDate,
  installedCjkCollections,
  NOTO_CJK_DIR,
} from '../render/fonts/cjk-subsets-build.ts';

const USAGE = `Usage: docgen fonts build [--out DIR] [--if-stale]
  Cuts the everyday characters of each installed Noto CJK face (${NOTO_CJK_DIR}) into a
  font file of its own, which Chromium prints faster than the collection (by a fifth in the
  headless shell, two to three times in the full browser),
  and writes DIR/fonts.conf, the fontconfig file docgen's Chromium then reads.
  --out DIR     where to write (default ${DEFAULT_FONTS_DIR})
  --if-stale    do nothing when DIR already holds a build of the same collections`;

export async function runFonts(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'build') {
    (sub === undefined || sub === 'help' || sub === '--help' ? out : err).write(`${USAGE}\n`);
    return sub === 'help' || sub === '--help' ? 0 : 2;
  }
  let outDir = DEFAULT_FONTS_DIR;
  let ifStale = false;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--out' && rest[i + 1]) outDir = rest[++i]!;
    else if (arg.startsWith('--out=')) outDir = arg.slice('--out='.length);
    else if (arg === '--if-stale') ifStale = true;
    else {
      err.write(`docgen fonts build: unknown argument ${JSON.stringify(arg)}\n${USAGE}\n`);
      return 2;
    }
  }
  outDir = resolve(outDir);
  const sources = installedCjkCollections();
  if (sources.length === 0) {
    err.write(
      `docgen fonts build: no Noto CJK collections in ${NOTO_CJK_DIR}; install the Debian package fonts-noto-cjk\n`,
    );
    return 1;
  }
  if (ifStale && cjkSubsetsUpToDate(outDir, sources)) {
    out.write(`docgen fonts build: ${outDir} is up to date\n`);
    return 0;
  }
  const started = Date.now();
  try {
    const built = await buildCjkSubsets({ sources, outDir, log: (line) => out.write(`docgen fonts build: ${line}\n`) });
    out.write(
      `docgen fonts build: ${built.subsets} subsets, ${(built.bytes / 1024 / 1024).toFixed(1)} MB, in ${((Date.now() - started) / 1000).toFixed(1)} s: ${built.fontconfigFile}\n`,
    );
    return 0;
  } catch (error) {
    err.write(`docgen fonts build: ${(error as Error).message}\n`);
    return 1;
  }
}
