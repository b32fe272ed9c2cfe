// README's performance tables from saved benchmark runs:
//   npm run -s bench -- --json > run-1.json   (three times)
//   npm run -s bench:readme -- run-1.json run-2.json run-3.json
// prints Markdown: medians over the runs, and the PDF/s ratios of every run.
import { readFileSync } from 'node:fs';
import { readmeTables, type BenchResult } from './lib/readme-table.ts';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error(
    'usage: npm run -s bench:readme -- run-1.json [run-2.json ...] (each the output of npm run -s bench -- --json)',
  );
  process.exit(2);
}
const runs = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchResult);
console.log(readmeTables(runs));
