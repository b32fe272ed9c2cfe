// A workspace's render weight: its share of the render fleet while several workspaces have
// work waiting (src/queue/fair-scheduler.ts). Weight 3 gets three jobs for every one of a
// workspace of weight 1. Whole numbers from 1 to 100; absent means 1.

export const DEFAULT_RENDER_WEIGHT = 1;
export const MAX_RENDER_WEIGHT = 100;

/** Why a render weight is not acceptable, or undefined when it is. */
export function renderWeightProblem(weight: number): string | undefined {
  if (!Number.isInteger(weight)) return 'must be a whole number';
  if (weight < 1 || weight > MAX_RENDER_WEIGHT) return `must be from 1 to ${MAX_RENDER_WEIGHT}`;
  return undefined;
}
