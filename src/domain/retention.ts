// Retention of generations, per workspace: how long after its creation a finished
// generation (row, PDF, webhook deliveries) is kept. Written `30d`, `12h`, `90m`; stored and
// sent over the admin API as whole seconds. At least one minute (the sweeper looks every
// few seconds to a minute), at most ten years.

export const MIN_RETENTION_SECONDS = 60;
export const MAX_RETENTION_SECONDS = 3650 * 86_400;

const UNIT_SECONDS = { m: 60, h: 3600, d: 86_400 } as const;

/** `30d` → 2592000. Throws an Error whose message says what is accepted. */
export function parseRetention(text: string): number {
  const match = /^\s*(\d{1,7})\s*([mhd])\s*$/.exec(text);
  if (!match)
    throw new Error(
      `retention ${JSON.stringify(text)} is not valid: use a whole number and a unit, m (minutes), h (hours) or d (days), e.g. 30d`,
    );
  const seconds = Number(match[1]) * UNIT_SECONDS[match[2] as keyof typeof UNIT_SECONDS];
  const problem = retentionProblem(seconds);
  if (problem) throw new Error(`retention ${JSON.stringify(text)} ${problem}`);
  return seconds;
}

/** Why a retention in seconds is not acceptable, or undefined when it is. */
export function retentionProblem(seconds: number): string | undefined {
  if (!Number.isInteger(seconds)) return 'must be whole seconds';
  if (seconds < MIN_RETENTION_SECONDS) return 'must be at least 1m (one minute)';
  if (seconds > MAX_RETENTION_SECONDS) return 'must be at most 3650d (ten years)';
  return undefined;
}

/** 2592000 → `30d`; the largest unit that divides it exactly (seconds as a last resort). */
export function formatRetention(seconds: number): string {
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (seconds >= size && seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}
