// Latency summaries that can be added up: a fixed log-scale histogram (the one home of its
// bucket bounds). Hourly counters (src/stats) keep one per template and hour; any period's
// p50/p95 then comes from adding the hours' histograms, never from the generations.
//
// Bucket 0 holds everything under 100 ms; bucket i (1…LAST) holds [100·√2^(i-1), 100·√2^i) ms;
// the last one is open-ended (about 2.7 h and more). A percentile read from it is the
// geometric middle of its bucket: within ±19 % of the true value, which is what a dashboard needs.

/** Latencies under this fall into bucket 0. */
const FIRST_BOUND_MS = 100;
const STEP = Math.SQRT2;
export const LATENCY_BUCKETS = 32;

/** The histogram bucket of a latency. */
export function latencyBucket(ms: number): number {
  if (!(ms >= FIRST_BOUND_MS)) return 0;
  const i = Math.floor(Math.log(ms / FIRST_BOUND_MS) / Math.log(STEP)) + 1;
  return Math.min(LATENCY_BUCKETS - 1, i);
}

/** The lower bound of a bucket in ms (0 for bucket 0). */
export function bucketLowerMs(bucket: number): number {
  return bucket <= 0 ? 0 : FIRST_BOUND_MS * STEP ** (bucket - 1);
}

/** The value a percentile in this bucket is reported as (its geometric middle; 50 ms for bucket 0). */
export function bucketValueMs(bucket: number): number {
  if (bucket <= 0) return FIRST_BOUND_MS / 2;
  return bucketLowerMs(bucket) * Math.sqrt(STEP);
}

/** Counts by bucket, as stored: `{ "b07": 12 }` (only non-empty buckets). */
export type LatencyCounts = Record<string, number>;

export function bucketField(bucket: number): string {
  return `b${String(bucket).padStart(2, '0')}`;
}

/** Adds `b` into `into`. */
export function addCounts(into: LatencyCounts, b: LatencyCounts | undefined): LatencyCounts {
  for (const [field, n] of Object.entries(b ?? {})) into[field] = (into[field] ?? 0) + n;
  return into;
}

/** The p-th percentile (0–100) of a histogram, in whole ms; null when it is empty. */
export function percentileMs(counts: LatencyCounts, p: number): number | null {
  const byBucket = new Array<number>(LATENCY_BUCKETS).fill(0);
  let total = 0;
  for (const [field, n] of Object.entries(counts)) {
    const bucket = Number(field.slice(1));
    if (!Number.isInteger(bucket) || bucket < 0 || bucket >= LATENCY_BUCKETS || !(n > 0)) continue;
    byBucket[bucket]! += n;
    total += n;
  }
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let bucket = 0; bucket < LATENCY_BUCKETS; bucket++) {
    seen += byBucket[bucket]!;
    if (seen >= rank) return Math.round(bucketValueMs(bucket));
  }
  return Math.round(bucketValueMs(LATENCY_BUCKETS - 1));
}
