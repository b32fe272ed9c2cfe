// `Prefer: wait=N` on create (docs/interface.md#waiting-for-the-result): the one reading of the
// header for REST, Connect and gRPC. RFC 7240 syntax: comma-separated preferences, each
// `token [= word] *(; parameter)`, names case-insensitive, only the first of a repeated
// preference counts; preferences other than `wait` are ignored, as the RFC asks. A `wait`
// whose value is not a whole number of seconds is refused (422 naming the header) rather than
// ignored: a client that asked for a wait and silently got none would poll in a loop of its own.
import { validationError } from '../domain/errors.ts';

/** The longest wait honoured; larger values are lowered to it (as `pageSize` is to 100). */
export const MAX_WAIT_SECONDS = 30;

/** The response header that says the wait was honoured, and for how long at most. */
export const PREFERENCE_APPLIED = 'Preference-Applied';

/**
 * Seconds the client asks to wait for a final state: undefined when the header is absent, has
 * no `wait` or asks for 0. Throws VALIDATION_ERROR (field `Prefer`) for a malformed `wait`.
 */
export function parsePreferWait(header: string | readonly string[] | null | undefined): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = typeof header === 'string' ? header : header.join(',');
  for (const preference of splitOutsideQuotes(text, ',')) {
    const [head = ''] = splitOutsideQuotes(preference, ';');
    const eq = head.indexOf('=');
    const name = (eq < 0 ? head : head.slice(0, eq)).trim().toLowerCase();
    if (name !== 'wait') continue;
    const raw = eq < 0 ? '' : unquote(head.slice(eq + 1).trim());
    if (!/^\d+$/.test(raw)) {
      throw validationError([
        { field: 'Prefer', issue: `wait must be a whole number of seconds, 0 to ${MAX_WAIT_SECONDS}` },
      ]);
    }
    const seconds = raw.length > 6 ? MAX_WAIT_SECONDS : Math.min(Number(raw), MAX_WAIT_SECONDS);
    return seconds === 0 ? undefined : seconds;
  }
  return undefined;
}

/** The Preference-Applied value for an honoured wait. */
export function preferenceApplied(seconds: number): string {
  return `wait=${seconds}`;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && quoted) i++;
    else if (c === '"') quoted = !quoted;
    else if (c === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.filter((p) => p.trim() !== '');
}

function unquote(value: string): string {
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
    return value.slice(1, -1).replace(/\\(.)/g, '$1');
  return value;
}
