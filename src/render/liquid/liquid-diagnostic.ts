// liquidjs errors as template diagnostics. Lives next to the Liquid worker because the worker
// process may read only this folder and liquidjs (Node permission model): it imports this file.
import type { DiagnosticSource, TemplateDiagnostic } from '../../domain/template-diagnostics.ts';

const POSITION_SUFFIX = /,?\s*(file:[^,]*,\s*)?line:\d+,\s*col:\d+\s*$/;

/**
 * A liquidjs error as a diagnostic: liquidjs puts the failing token on the error (partials
 * carry their name as the token's file) and repeats the position at the end of the message.
 */
export function liquidErrorDiagnostic(err: unknown, source: DiagnosticSource): TemplateDiagnostic {
  const e = err as { message?: unknown; token?: { file?: unknown; getPosition?: () => [number, number] } } | null;
  const text = String(e?.message ?? err).split('\n')[0]!;
  let line = 0;
  let column = 0;
  try {
    [line, column] = e?.token?.getPosition?.() ?? [0, 0];
  } catch {
    // a token without its input: position unknown
  }
  const file = typeof e?.token?.file === 'string' && e.token.file !== '' ? e.token.file : undefined;
  return {
    source: file ? `partials/${file}` : source,
    line,
    column,
    message: text.replace(POSITION_SUFFIX, '') || text,
    severity: 'error',
  };
}
