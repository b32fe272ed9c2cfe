// The filters docgen adds for template authors: formatting in the version's locale and time
// zone, codes and charts (docs/templates.md). Registered on every Liquid engine, so publishing
// knows them and rendering runs them.

import type { Liquid } from 'liquidjs';
import { chart } from './chart-filter.ts';
import { CODE_FILTERS } from './code-filters.ts';
import { formatFilters, type FormatSettings } from './format-filters.ts';

export type { FormatSettings } from './format-filters.ts';

/** `settings` is read at each filter call: the worker sets it per render. */
export function registerAuthoringFilters(liquid: Liquid, settings: FormatSettings): void {
  const filters = { ...formatFilters(settings), ...CODE_FILTERS, chart: chart(settings) };
  for (const [name, filter] of Object.entries(filters)) liquid.registerFilter(name, filter);
}
