// Writes the sample invoice under each conformance level (and a signed one, and the Factur-X
// case) to a directory, with manifest.tsv (file, veraPDF flavour) for the CI job that runs
// veraPDF (.github/workflows/ci.yml, job verapdf), which cannot be installed here.
//
//   node scripts/conformance-samples.ts OUT_DIR
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchSigner, FINISHING_CASES, finishingCase, finishingEngine } from '../bench/lib/finishing-cases.ts';
import { createDocumentRenderer } from '../src/render/document-renderer.ts';

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/conformance-samples.ts OUT_DIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
const engine = await finishingEngine();
const renderer = createDocumentRenderer({
  liquid: engine.liquid,
  pool: engine.pool,
  timeoutMs: 60_000,
  certificates: benchSigner().certificates,
});
const manifest: string[] = [];
try {
  for (const c of FINISHING_CASES.filter((k) => k.flavours)) {
    const { content, variables } = finishingCase(c);
    const { pdf } = await renderer.render(content, variables, { workspaceId: 'ws_000000000000000000000001' });
    const file = `${c.name.replace(/[^A-Za-z0-9]+/g, '-').replace(/-+$/, '')}.pdf`;
    writeFileSync(join(out, file), pdf);
    for (const flavour of c.flavours!) manifest.push(`${file}\t${flavour}`);
    console.log(`${file}: ${c.flavours!.join(', ')}`);
  }
} finally {
  await engine.close();
}
writeFileSync(join(out, 'manifest.tsv'), `${manifest.join('\n')}\n`);
