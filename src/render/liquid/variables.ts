// Supplied variables vs. the version's declarations (docs/interface.md#failures): names the template does not
// declare and missing required ones are permanent failures; optional ones get their default.

import type { JsonObject, JsonValue, VariableDeclaration } from '../../domain/template.ts';
import { RenderError } from '../render-error.ts';
import { isPlainObject } from '../../domain/json.ts';

const MAX_LISTED = 20;

function quoteList(names: readonly string[]): string {
  const shown = names.slice(0, MAX_LISTED).map((n) => JSON.stringify(n));
  const more = names.length > MAX_LISTED ? ` and ${names.length - MAX_LISTED} more` : '';
  return shown.join(', ') + more;
}

function declaredList(declared: readonly VariableDeclaration[]): string {
  return declared.length === 0
    ? 'the template declares no variables'
    : `declared: ${quoteList(declared.map((d) => d.name))}`;
}

/**
 * Returns the values the template renders with: the supplied ones plus the defaults of optional
 * variables that were not supplied. Throws RenderError UNKNOWN_VARIABLE (naming the unknown
 * names and the declared ones) or MISSING_VARIABLE (naming the missing required ones).
 * A supplied `null` counts as supplied: the caller said so explicitly.
 */
export function resolveVariables(declared: readonly VariableDeclaration[], supplied: JsonObject): JsonObject {
  if (!isPlainObject(supplied)) {
    throw new RenderError('UNKNOWN_VARIABLE', 'Variables must be a JSON object');
  }
  const byName = new Map(declared.map((d) => [d.name, d]));
  const suppliedNames = Object.keys(supplied).filter((name) => supplied[name] !== undefined);

  const unknown = suppliedNames.filter((name) => !byName.has(name)).sort();
  const missing = declared.filter((d) => d.required && !suppliedNames.includes(d.name)).map((d) => d.name);

  if (unknown.length > 0) {
    const noun = unknown.length === 1 ? 'Unknown variable' : 'Unknown variables';
    const alsoMissing = missing.length > 0 ? `; also missing required ${quoteList(missing)}` : '';
    throw new RenderError(
      'UNKNOWN_VARIABLE',
      `${noun} ${quoteList(unknown)}: not declared by this template (${declaredList(declared)})${alsoMissing}`,
    );
  }
  if (missing.length > 0) {
    const noun = missing.length === 1 ? 'Missing required variable' : 'Missing required variables';
    throw new RenderError('MISSING_VARIABLE', `${noun} ${quoteList(missing)}`);
  }

  // Object.fromEntries defines own properties, so a name like "__proto__" cannot touch prototypes.
  const entries: Array<[string, JsonValue]> = suppliedNames.map((name) => [name, supplied[name]!]);
  for (const d of declared) {
    if (!d.required && d.default !== undefined && !suppliedNames.includes(d.name)) {
      entries.push([d.name, structuredClone(d.default)]);
    }
  }
  return Object.fromEntries(entries) as JsonObject;
}
