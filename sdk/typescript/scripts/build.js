// Builds dist/: tsc compiles src/ to JavaScript and declarations, then docgen's generated
// protobuf code for docgen.v1 (src/gen, a link to the repository's src/gen/docgen/v1) is
// copied in beside it, as files.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(`${root}dist`, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', `${root}tsconfig.json`], { stdio: 'inherit' });
cpSync(`${root}src/gen`, `${root}dist/gen`, { recursive: true, dereference: true });
