// The filters docgen adds for template authors: formatting in the version's locale and time
// zone, codes and charts (docs/templates.md). Registered on every Liquid engine, so publishing
// knows them and rendering runs them. Their names have one home, src/domain/liquid-vocabulary.ts
// (the portal's completions read it too): an implementation without its name there, or a name
// without an implementation, stops the engine from being built.

import type { Liquid } from 'liquidjs';
import { AUTHORING_FILTERS } from '../../../domain/liquid-vocabulary.ts';
import { chart } from './chart-filter.ts';
import { CODE_FILTERS } from './code-filters.ts';
import { formatFilters, type FormatSettings } from './format-filters.ts';

export type { FormatSettings } from './format-filters.ts';

/** `settings` is read at each filter call: the worker sets it per render. */
export function registerAuthoringFilters(liquid: Liquid, settings: FormatSettings): void {
  const filters = { ...formatFilters(settings), ...CODE_FILTERS, chart: chart(settings) };
  const named = Object.keys(AUTHORING_FILTERS);
  const mismatch = [
    ...Object.keys(filters).filter((n) => !named.includes(n)),
    ...named.filter((n) => !Object.hasOwn(filters, n)),
  ];
  if (mismatch.length > 0)
    throw new Error(`authoring filters and src/domain/liquid-vocabulary.ts disagree on: ${mismatch.join(', ')}`);
  for (const [name, filter] of Object.entries(filters)) liquid.registerFilter(name, filter);
}
