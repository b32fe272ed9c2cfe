// The protobuf contract: lint-clean under buf's STANDARD rules, the committed src/gen is
// exactly what `buf generate` produces, and no change breaks the previous commit's API.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const buf = path.join(root, 'node_modules/.bin/buf');
const env = { ...process.env, PATH: `${path.join(root, 'node_modules/.bin')}:${process.env.PATH}` };
const scratch = mkdtempSync(path.join(tmpdir(), 'docgen-buf-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? listFiles(full, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

describe('proto contract', () => {
  it('passes buf lint (STANDARD)', () => {
    const result = spawnSync(buf, ['lint'], { cwd: root, env, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('committed src/gen matches buf generate', () => {
    execFileSync(buf, ['generate', '--output', scratch], { cwd: root, env });
    const generated = path.join(scratch, 'src/gen');
    const committed = path.join(root, 'src/gen');
    const files = listFiles(generated).sort();
    expect(listFiles(committed).sort()).toEqual(files);
    for (const file of files) {
      expect(readFileSync(path.join(committed, file), 'utf8'), `src/gen/${file} is stale: run npm run generate`).toBe(
        readFileSync(path.join(generated, file), 'utf8'),
      );
    }
  });

  it('has no breaking change against the previous commit', (ctx) => {
    const previous = spawnSync('git', ['rev-parse', '--verify', '-q', 'HEAD~1:proto'], { cwd: root, encoding: 'utf8' });
    if (previous.status !== 0) {
      ctx.skip(); // first commit with protos (or a shallow clone): nothing to compare against
      return;
    }
    const result = spawnSync(buf, ['breaking', '--against', '.git#ref=HEAD~1'], { cwd: root, env, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});
