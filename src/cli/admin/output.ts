// Human output of `docgen admin`: aligned fields, tables, times. (--json prints the
// command's own JSON shape instead.)
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';

/** A timestamp for --json output: ISO 8601, or null when unset. */
export function iso(t: Timestamp | undefined): string | null {
  return t ? timestampDate(t).toISOString() : null;
}

/** A timestamp for people: to the second, UTC, or "-" when unset. */
export function time(t: Timestamp | undefined): string {
  return t
    ? timestampDate(t)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '-';
}

export function fields(rows: Array<[string, string]>): string {
  const width = Math.max(...rows.map(([k]) => k.length)) + 1;
  return rows.map(([k, v]) => `${`${k}:`.padEnd(width + 1)}${v}`).join('\n');
}

export function table(header: string[], rows: string[][]): string {
  if (rows.length === 0) return '(none)';
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The hint under a list that has another page. */
export function more(nextPageToken: string): string {
  return nextPageToken ? `\n(more: --page-token ${nextPageToken})` : '';
}
