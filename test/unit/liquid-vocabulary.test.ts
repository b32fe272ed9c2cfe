// docgen's filter names have one home (src/domain/liquid-vocabulary.ts): the engine registers
// exactly those, and the portal's completions offer them.
import { describe, expect, it } from 'vitest';
import { DOCGEN_FILTERS } from '../../src/domain/liquid-vocabulary.ts';
import { createLiquidEngine, PartialStore } from '../../src/render/liquid/liquid-engine.ts';

describe('liquid vocabulary', () => {
  it('names every filter docgen adds, and the engine knows each of them', () => {
    const liquid = createLiquidEngine(new PartialStore(), { settings: { locale: 'en-US', timeZone: 'UTC' } });
    const names = Object.keys(DOCGEN_FILTERS);
    expect(names).toEqual(
      expect.arrayContaining(['money', 'number', 'percent', 'format_date', 'qr_code', 'barcode', 'epc_qr', 'chart']),
    );
    for (const name of names) expect(liquid.filters[name], name).toBeTypeOf('function');
  });
});
