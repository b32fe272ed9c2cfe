// Finishing pipeline benchmark (module level): the sample invoice rendered by the document
// renderer with one finishing case at a time (bench/lib/finishing-cases.ts), the cases taking
// turns round by round so that load on a shared machine spreads over all of them. Reports per
// case the p50 of the whole render and of each finish_* stage it ran (render-stages.ts), and
// what the case adds to the plain render's p50. The plain case runs no stage at all.
//
//   node bench/finishing-bench.ts [--json] [--rounds=N]   (default 15 rounds, 2 warm-up)
//   BENCH_CASES=plain,stamp node bench/finishing-bench.ts  (names containing these words)
import { formatId } from '../src/domain/ids.ts';
import { ObjectId } from 'mongodb';
import { createDocumentRenderer } from '../src/render/document-renderer.ts';
import { startLoopbackTsa } from '../test/harness/loopback-tsa.ts';
import { benchSigner, FINISHING_CASES, finishingCase, finishingEngine } from './lib/finishing-cases.ts';
import { formatTable, percentile } from './lib/measure.ts';

const json = process.argv.includes('--json');
const rounds = Number(/--rounds=(\d+)/.exec(process.argv.join(' '))?.[1] ?? 15);
const WARMUP = 2;
const wanted = process.env.BENCH_CASES?.split(',').map((s) => s.trim().toLowerCase());
const cases = FINISHING_CASES.filter((c) => !wanted || wanted.some((w) => c.name.toLowerCase().includes(w)));

const { pki, certificates } = benchSigner();
const tsa = await startLoopbackTsa(pki.tsa);
const engine = await finishingEngine();
const base = { liquid: engine.liquid, pool: engine.pool, timeoutMs: 60_000, certificates };
const plainRenderer = createDocumentRenderer(base);
const tsaRenderer = createDocumentRenderer({ ...base, timestamp: { url: tsa.url } });
const workspaceId = formatId('workspace', new ObjectId());

const totals = new Map<string, number[]>();
const stages = new Map<string, Map<string, number[]>>();
try {
  for (let round = 0; round < rounds + WARMUP; round++) {
    for (const c of cases) {
      const { content, variables } = finishingCase(c);
      const seen = new Map<string, number>();
      const started = performance.now();
      await (c.timestamp ? tsaRenderer : plainRenderer).render(content, variables, {
        workspaceId,
        onStage: (stage, ms) => seen.set(stage, (seen.get(stage) ?? 0) + ms),
      });
      const ms = performance.now() - started;
      if (round < WARMUP) continue;
      totals.set(c.name, [...(totals.get(c.name) ?? []), ms]);
      const perStage = stages.get(c.name) ?? new Map<string, number[]>();
      for (const [stage, t] of seen)
        if (stage.startsWith('finish_')) perStage.set(stage, [...(perStage.get(stage) ?? []), t]);
      stages.set(c.name, perStage);
    }
    if (!json) process.stderr.write(`round ${round + 1}/${rounds + WARMUP}\n`);
  }
} finally {
  await engine.close();
  await tsa.close();
}

const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const plainP50 = p50(totals.get(cases[0]!.name) ?? [0]);
const rows = cases.map((c) => {
  const perStage = [...(stages.get(c.name) ?? new Map<string, number[]>())].map(
    ([stage, xs]) => [stage.replace('finish_', ''), p50(xs)] as const,
  );
  const total = p50(totals.get(c.name)!);
  return { case: c.name, renderP50Ms: total, addedP50Ms: total - plainP50, stagesP50Ms: Object.fromEntries(perStage) };
});
if (json) {
  console.log(JSON.stringify({ rounds, plainP50Ms: plainP50, cases: rows }, null, 2));
} else {
  console.log(
    formatTable(
      ['case', 'render p50 ms', '+ vs plain', 'finish stages p50 ms'],
      rows.map((r) => [
        r.case,
        r.renderP50Ms,
        r.addedP50Ms,
        Object.entries(r.stagesP50Ms)
          .map(([s, ms]) => `${s} ${ms.toFixed(1)}`)
          .join(', ') || '-',
      ]),
    ),
  );
}
