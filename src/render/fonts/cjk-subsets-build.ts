// `docgen fonts build`: cuts the everyday subset of each installed Noto CJK face
// (cjk-everyday-subsets.ts) with HarfBuzz's `hb-subset`, checks that each subset holds every
// character it should, writes the fontconfig file Chromium reads (fontconfig-file.ts) and builds
// its cache with `fc-cache`. Setup and the image build run it: about 6 s and 118 MB.
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import * as fontkit from 'fontkit';
import { planEverydaySubsets, type EverydaySubset } from './cjk-everyday-subsets.ts';
import { FONTCONFIG_FILE_NAME } from './chromium-fontconfig.ts';
import { fontconfigFile, type SubsetEntry } from './fontconfig-file.ts';

const run = promisify(execFile);

/** Debian's fonts-noto-cjk (and -extra) install the collections here. */
export const NOTO_CJK_DIR = '/usr/share/fonts/opentype/noto';
const MANIFEST = 'manifest.json';
/** Bump when the subsets would come out differently from the same collections. */
const MANIFEST_VERSION = 2;

export function installedCjkCollections(dir = NOTO_CJK_DIR): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => /^Noto(Sans|Serif)CJK.*\.ttc$/.test(name))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}

export interface CjkSubsetsManifest {
  version: number;
  sources: Array<{ path: string; size: number; mtimeMs: number }>;
  subsets: number;
  bytes: number;
}

/** True when outDir holds a complete build from exactly these collections, unchanged since. */
export function cjkSubsetsUpToDate(outDir: string, sources: string[]): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(outDir, MANIFEST), 'utf8')) as CjkSubsetsManifest;
    return (
      manifest.version === MANIFEST_VERSION &&
      JSON.stringify(manifest.sources) === JSON.stringify(sources.map(describeSource)) &&
      statSync(join(outDir, FONTCONFIG_FILE_NAME)).isFile()
    );
  } catch {
    return false;
  }
}

export interface BuildCjkSubsetsOptions {
  sources: string[];
  outDir: string;
  log?: (line: string) => void;
}

export async function buildCjkSubsets(
  options: BuildCjkSubsetsOptions,
): Promise<CjkSubsetsManifest & { fontconfigFile: string }> {
  const log = options.log ?? (() => {});
  await requireTool('hb-subset', 'Debian package libharfbuzz-bin');
  await requireTool('fc-query', 'Debian package fontconfig');
  const subsetDir = join(options.outDir, 'subsets');
  const cacheDir = join(options.outDir, 'cache');
  // The manifest and fontconfig file go first and come last: a build cut short is never taken
  // for a complete one.
  rmSync(join(options.outDir, MANIFEST), { force: true });
  rmSync(join(options.outDir, FONTCONFIG_FILE_NAME), { force: true });
  rmSync(subsetDir, { recursive: true, force: true });
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(subsetDir, { recursive: true });
  mkdirSync(cacheDir, { recursive: true });

  const entries: SubsetEntry[] = [];
  const jobs: Array<() => Promise<void>> = [];
  for (const source of options.sources) {
    const faces = await collectionFaces(source);
    const plans = planEverydaySubsets(
      faces.map((face) => ({ family: face.families[0]!, codepoints: face.codepoints })),
      basename(source, '.ttc'),
    );
    for (const plan of plans) {
      entries.push({
        fileName: plan.fileName,
        families: faces[plan.faceIndex]!.families,
        languages: faces[plan.faceIndex]!.languages,
      });
      jobs.push(() => cutSubset(source, plan, subsetDir));
    }
    log(`${basename(source)}: ${plans.length} of ${faces.length} faces`);
  }
  await runAll(jobs, availableParallelism());

  const file = join(options.outDir, FONTCONFIG_FILE_NAME);
  writeFileSync(file, fontconfigFile({ subsetDir, cacheDir, subsets: entries }));
  await run('fc-cache', ['-f', subsetDir], { env: { ...process.env, FONTCONFIG_FILE: file } });
  const bytes = readdirSync(subsetDir).reduce((sum, name) => sum + statSync(join(subsetDir, name)).size, 0);
  const manifest: CjkSubsetsManifest = {
    version: MANIFEST_VERSION,
    sources: options.sources.map(describeSource),
    subsets: entries.length,
    bytes,
  };
  writeFileSync(join(options.outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  return { ...manifest, fontconfigFile: file };
}

interface FaceInfo {
  families: string[];
  languages: string[];
  codepoints: number[];
}

/** Each face's characters (fontkit) and its family names and languages as fontconfig sees them. */
async function collectionFaces(source: string): Promise<FaceInfo[]> {
  const opened = fontkit.openSync(source);
  if (!('fonts' in opened)) throw new Error(`${source} is not a font collection`);
  const { stdout } = await run('fc-query', ['--format', '%{index}\t%{family}\t%{lang}\n', source], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const described = new Map<number, { families: string[]; languages: string[] }>();
  for (const line of stdout.split('\n')) {
    const [index, families, languages] = line.split('\t');
    if (!index || !families) continue;
    described.set(Number(index), {
      families: families.split(','),
      languages: (languages ?? '').split('|').filter(Boolean),
    });
  }
  return opened.fonts.map((font, index) => {
    const info = described.get(index);
    if (!info) throw new Error(`fc-query did not describe face ${index} of ${source}`);
    return { ...info, codepoints: font.characterSet };
  });
}

async function cutSubset(source: string, plan: EverydaySubset, subsetDir: string): Promise<void> {
  const output = join(subsetDir, plan.fileName);
  const unicodes = `${output}.unicodes`;
  writeFileSync(unicodes, plan.codepoints.map((c) => c.toString(16)).join(','));
  await run('hb-subset', [
    `--face-index=${plan.faceIndex}`,
    `--unicodes-file=${unicodes}`,
    // Everything but the characters and the hints stays: OpenType features (vertical forms,
    // regional variants by language), every name, the .notdef outline, and BASE (baselines
    // for vertical text), which hb-subset drops by default and copies when asked (no glyph ids).
    // Hints go: Chromium prints these (CFF) faces as unhinted outlines, so they never reach a
    // PDF (the same PDF, byte for byte), and each subset is a sixth smaller, which is what a
    // print costs (docs/architecture.md#print-path).
    '--layout-features=*',
    '--name-IDs=*',
    '--name-languages=*',
    '--notdef-outline',
    '--drop-tables-=BASE',
    '--passthrough-tables',
    '--no-hinting',
    `--output-file=${output}`,
    source,
  ]);
  rmSync(unicodes);
  // hb-subset can leave out a character map it cannot fit (a subset of 20,000 scattered
  // characters lost its whole map in testing): check what fontconfig reads back.
  const { stdout } = await run('fc-query', ['--format', '%{charset}', output]);
  const mapped = countCharset(stdout);
  if (mapped !== plan.codepoints.length) {
    throw new Error(
      `${plan.fileName}: fontconfig reads ${mapped} characters, ${plan.codepoints.length} were asked for`,
    );
  }
}

/** Characters in fontconfig's charset notation (`20-7e a0 4e00-9fff`). */
export function countCharset(charset: string): number {
  let count = 0;
  for (const range of charset.trim().split(/\s+/).filter(Boolean)) {
    const [from, to] = range.split('-');
    count += to === undefined ? 1 : Number.parseInt(to, 16) - Number.parseInt(from!, 16) + 1;
  }
  return count;
}

async function runAll(jobs: Array<() => Promise<void>>, parallel: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next]!;
      next += 1;
      await job();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, worker));
}

async function requireTool(command: string, from: string): Promise<void> {
  try {
    await run(command, ['--version']);
  } catch {
    throw new Error(`docgen fonts build needs \`${command}\` (${from}); install it and run again`);
  }
}

function describeSource(path: string): { path: string; size: number; mtimeMs: number } {
  const stats = statSync(path);
  return { path, size: stats.size, mtimeMs: Math.round(stats.mtimeMs) };
}
