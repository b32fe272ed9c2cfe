#!/usr/bin/env node
// Entry point of the `docgen` command. docgen's sources are TypeScript that Node 24 runs
// directly (type stripping); refuse older runtimes with a message that says what to do.
const [major] = process.versions.node.split('.').map(Number);
if (major < 24) {
  console.error(
    `docgen needs Node.js 24 or newer (this is ${process.version}). ` +
      'Run it through npm (`npm run docgen -- …`), which uses the pinned node@24 from devDependencies, ' +
      'or install Node 24 LTS.',
  );
  process.exit(1);
}
await import('../src/cli/main.ts');
