import { describe, expect, it } from 'vitest';
import type { VariableDeclaration } from '../../src/domain/template.ts';
import { resolveVariables } from '../../src/render/liquid/variables.ts';
import { RenderError } from '../../src/render/render-error.ts';

const declared: VariableDeclaration[] = [
  { name: 'customer', required: true, description: 'Customer name' },
  { name: 'total', required: true, description: 'Total' },
  { name: 'currency', required: false, default: 'EUR', description: 'Currency' },
  { name: 'lines', required: false, default: [{ sku: 'A' }], description: 'Lines' },
  { name: 'note', required: false, description: 'No default' },
];

function failure(fn: () => unknown): RenderError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RenderError);
    return err as RenderError;
  }
  throw new Error('expected a RenderError');
}

describe('resolveVariables', () => {
  it('applies defaults of optional variables that were not supplied', () => {
    const values = resolveVariables(declared, { customer: 'Ada', total: 12.5 });
    expect(values).toEqual({ customer: 'Ada', total: 12.5, currency: 'EUR', lines: [{ sku: 'A' }] });
    expect('note' in values).toBe(false);
  });

  it('keeps supplied values over defaults, null included', () => {
    expect(resolveVariables(declared, { customer: 'Ada', total: 1, currency: null })).toMatchObject({ currency: null });
    expect(resolveVariables(declared, { customer: 'Ada', total: 1, currency: 'USD' })).toMatchObject({
      currency: 'USD',
    });
  });

  it('copies defaults, so a render cannot change the declaration', () => {
    const values = resolveVariables(declared, { customer: 'Ada', total: 1 });
    (values.lines as Array<Record<string, string>>)[0]!.sku = 'changed';
    expect(declared[3]!.default).toEqual([{ sku: 'A' }]);
  });

  it('fails permanently on an unknown variable, naming it and the declared ones', () => {
    const err = failure(() => resolveVariables(declared, { customer: 'Ada', total: 1, cusotmer: 'typo' }));
    expect(err.code).toBe('UNKNOWN_VARIABLE');
    expect(err.kind).toBe('permanent');
    expect(err.message).toContain('"cusotmer"');
    expect(err.message).toContain('not declared');
    for (const name of ['customer', 'total', 'currency', 'lines', 'note']) expect(err.message).toContain(`"${name}"`);
  });

  it('lists several unknown variables and says when nothing is declared', () => {
    const err = failure(() => resolveVariables([], { b: 1, a: 2 }));
    expect(err.message).toMatch(/Unknown variables "a", "b"/);
    expect(err.message).toContain('declares no variables');
  });

  it('fails permanently on missing required variables, naming them', () => {
    const err = failure(() => resolveVariables(declared, { currency: 'EUR' }));
    expect(err.code).toBe('MISSING_VARIABLE');
    expect(err.kind).toBe('permanent');
    expect(err.message).toBe('Missing required variables "customer", "total"');
  });

  it('does not let a variable named __proto__ touch prototypes', () => {
    const supplied = JSON.parse('{"__proto__": {"polluted": true}}');
    const withProto: VariableDeclaration[] = [{ name: '__proto__', required: false, description: '' }];
    const values = resolveVariables(withProto, supplied);
    expect(Object.getPrototypeOf(values)).toBe(Object.prototype);
    expect(Object.hasOwn(values, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses variables that are not an object', () => {
    expect(failure(() => resolveVariables(declared, [] as never)).kind).toBe('permanent');
  });
});
