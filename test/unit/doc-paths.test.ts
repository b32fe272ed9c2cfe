// Every repository path a comment or doc names exists, and every `docs/….md#section` link
// names a heading of that document: the code's citations of the interface stay true.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCANNED = ['src', 'gateway', 'test', 'bench', 'docs', 'deploy', 'scripts', 'README.md'];
const PATH =
  /(?<![\w./-])((?:src|gateway|test|docs|proto|deploy|bench|scripts)\/[\w./-]*[\w-]\.(?:json|ts|js|md|yaml|yml|proto|sh))(?![\w])(#[\w-]+)?/g;

const MD_LINK = /\]\(((?!https?:)[\w./-]+\.md)(#[\w-]+)?\)/g;

function files(path: string): string[] {
  const full = join(ROOT, path);
  if (statSync(full).isFile()) return [path];
  return readdirSync(full).flatMap((name) =>
    name === 'gen' || name === 'node_modules' || name.startsWith('.') ? [] : files(join(path, name)),
  );
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#+ (.+)$/gm)].map((m) =>
      m[1]!
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('paths named in code and docs', () => {
  const cited = SCANNED.filter((p) => existsSync(join(ROOT, p)))
    .flatMap(files)
    .filter((f) => /\.(ts|md|yaml|yml|sh)$/.test(f))
    .flatMap((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      const named = [...text.matchAll(PATH)].map((m) => ({ file, path: m[1]!, anchor: m[2] }));
      // Relative Markdown links: [text](other.md#section), resolved from the linking file.
      const linked = file.endsWith('.md')
        ? [...text.matchAll(MD_LINK)].map((m) => ({ file, path: normalize(join(dirname(file), m[1]!)), anchor: m[2] }))
        : [];
      return [...named, ...linked];
    });

  it('finds citations to check', () => {
    expect(cited.filter((c) => c.path === 'docs/interface.md').length).toBeGreaterThan(20);
  });

  it('every cited path exists', () => {
    const missing = cited.filter((c) => !existsSync(join(ROOT, c.path))).map((c) => `${c.file}: ${c.path}`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('every cited section exists', () => {
    const broken = cited
      .filter((c) => c.anchor !== undefined && c.path.endsWith('.md') && existsSync(join(ROOT, c.path)))
      .filter((c) => !anchors(readFileSync(join(ROOT, c.path), 'utf8')).has(c.anchor!.slice(1)))
      .map((c) => `${c.file}: ${c.path}${c.anchor}`);
    expect([...new Set(broken)]).toEqual([]);
  });
});
