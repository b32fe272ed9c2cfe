// What the authoring filters share: naming the value a filter got (the expression before the
// `|`, so that an error says which variable), reading keyword arguments, and the plain values
// filters take. liquidjs adds the line and column to any error a filter throws.

import { Drop } from 'liquidjs';

/** liquidjs's `this` inside a filter: the filter's token, whose input is the whole source. */
export interface FilterThis {
  token?: { input?: string; begin?: number };
}

/**
 * The expression the filter is applied to, as written (`line.unitPrice`, `total | times: 2`):
 * from the last `{{` or `{%` before the filter up to its `|`.
 */
export function filteredExpression(self: FilterThis | undefined): string {
  const input = self?.token?.input;
  const begin = self?.token?.begin;
  if (typeof input !== 'string' || typeof begin !== 'number') return 'the value';
  const before = input.slice(Math.max(0, begin - 400), begin);
  const open = Math.max(before.lastIndexOf('{{'), before.lastIndexOf('{%'));
  let text = open >= 0 ? before.slice(open + 2) : before;
  text = text.replace(/^-/, '');
  // Inside {% liquid %} every line is a tag of its own.
  if (/^\s*liquid\b/.test(text)) text = text.slice(text.lastIndexOf('\n') + 1);
  text = text
    .replace(/^\s*(?:assign\s+[\w.-]+\s*=|echo\b)/, '')
    .replace(/\|\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  // A literal ('4006…' | barcode) is shown as the value itself.
  if (text === '' || /^(?:'[^']*'|"[^"]*"|-?\d+(?:\.\d+)?)$/.test(text)) return 'the value';
  return `\`${text.length > 60 ? `${text.slice(0, 57)}…` : text}\``;
}

/** A failure of an authoring filter: liquidjs adds `, line:N, col:M`. */
export class FilterError extends Error {
  override name = 'FilterError';
}

/** The value as an error message shows it. */
export function shown(value: unknown): string {
  if (value === undefined || value === null) return 'empty (nil)';
  if (typeof value === 'string') {
    const text = JSON.stringify(value);
    return text.length > 42 ? `${text.slice(0, 40)}…"` : text;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return 'an object';
}

/** Values as filters see them: Drops (escaped HTML) by their plain value. */
export function plain(value: unknown): unknown {
  return value instanceof Drop ? value.valueOf() : value;
}

/**
 * Keyword arguments (`name: value`) arrive as [name, value] pairs. (A list variable of exactly a
 * string and one more value would read as one too; none of these filters takes a list argument.)
 */
export function splitArguments(args: unknown[]): { positional: unknown[]; named: Map<string, unknown> } {
  const positional: unknown[] = [];
  const named = new Map<string, unknown>();
  for (const arg of args) {
    if (Array.isArray(arg) && arg.length === 2 && typeof arg[0] === 'string') {
      named.set(arg[0], plain(arg[1]));
    } else positional.push(plain(arg));
  }
  return { positional, named };
}

/** Fails on keyword arguments the filter does not know, naming the ones it does. */
export function onlyKnown(filter: string, named: Map<string, unknown>, known: readonly string[]): void {
  for (const name of named.keys()) {
    if (!known.includes(name))
      throw new FilterError(
        `${filter}: unknown option "${name}"${known.length > 0 ? ` (options: ${known.join(', ')})` : ' (it takes none)'}`,
      );
  }
}
