// Output that is already HTML (escaped values, SVG drawn by a filter), and how values become
// HTML text. Its own module so that the engine and the filters share it without a cycle.
import { Drop } from 'liquidjs';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * HTML that must not be escaped again. A liquidjs Drop, so other filters see its plain string
 * value (and their result is escaped again, which is the safe direction).
 */
export class SafeHtml extends Drop {
  readonly html: string;
  constructor(html: string) {
    super();
    this.html = html;
  }
  override valueOf(): string {
    return this.html;
  }
  override toString(): string {
    return this.html;
  }
  get length(): number {
    return this.html.length;
  }
}

/** liquidjs's stringification of output values (arrays joined without separator, nil empty). */
export function stringify(value: unknown): string {
  if (value instanceof Drop) value = value.valueOf();
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(stringify).join('');
  return String(value);
}

export function htmlOf(value: unknown): string {
  return value instanceof SafeHtml ? value.html : escapeHtml(stringify(value));
}
