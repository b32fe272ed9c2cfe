// Codes and charts are pure functions of their input, and a preview renders the same sample data
// at every keystroke: the worker keeps the SVGs it drew last, within a byte budget, so a redraw
// of the same code or chart costs a lookup (measured: the sample invoice's EPC QR code is most of
// its Liquid time otherwise).

export class RecentResults {
  private readonly entries = new Map<string, string>();
  private bytes = 0;
  private readonly budget: number;

  constructor(budgetBytes: number) {
    this.budget = budgetBytes;
  }

  /** The result for `key`, drawn by `draw` when it is not kept (and kept if it fits the budget). */
  get(key: string, draw: () => string): string {
    const kept = this.entries.get(key);
    if (kept !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(key);
      this.entries.set(key, kept);
      return kept;
    }
    const result = draw();
    const size = (key.length + result.length) * 2;
    if (size > this.budget / 4) return result;
    while (this.bytes + size > this.budget) {
      const [oldest, value] = this.entries.entries().next().value as [string, string];
      this.entries.delete(oldest);
      this.bytes -= (oldest.length + value.length) * 2;
    }
    this.entries.set(key, result);
    this.bytes += size;
    return result;
  }
}
