// Typed variables (src/domain/variable-schema.ts, variable-types.ts) and the version settings
// that come with them (locale-settings.ts): which schemas are accepted, the one message a
// generation whose variables break them gets (every problem by path), the TypeScript type
// clients get, and the checks of a version's defaults and sample data.
import { describe, expect, it } from 'vitest';
import { normalizeContent } from '../../src/admin/template-content.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { normalizeLocaleSettings } from '../../src/domain/locale-settings.ts';
import {
  schemaProblems,
  variableProblemsMessage,
  variableValueProblems,
  type VariableSchema,
} from '../../src/domain/variable-schema.ts';
import { typeNameFor, variablesInterface } from '../../src/domain/variable-types.ts';
import { analyzeTemplate, diagnoseTemplate } from '../../src/render/liquid/analyze-template.ts';
import { galleryTemplate, GALLERY_NAMES } from '../../src/gallery/gallery.ts';

const LINES: VariableSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['description', 'quantity'],
    properties: {
      description: { type: 'string', minLength: 1 },
      quantity: { type: 'number', minimum: 0 },
      unit: { type: 'string', enum: ['h', 'pcs'] },
      sku: { type: 'string', pattern: '^[A-Z]{3}-\\d+$' },
    },
  },
  maxItems: 5,
};

describe('variable values against their schemas', () => {
  it('lists every problem by path, in one message', () => {
    const problems = variableValueProblems(
      [{ name: 'lines', schema: LINES }, { name: 'rate', schema: { type: 'integer', maximum: 100 } }, { name: 'free' }],
      {
        lines: [
          { description: 'a', quantity: 1 },
          { description: 'b', quantity: 2, unit: 'kg' },
          { description: 'c', quantity: '3' },
          { quantity: -1, sku: 'abc-1' },
        ],
        rate: 12.5,
        free: 'anything',
      },
    );
    expect(problems).toEqual([
      'lines[1].unit: expected one of "h", "pcs", got string "kg"',
      'lines[2].quantity: expected number, got string "3"',
      'lines[3].description: is required',
      'lines[3].quantity: must be at least 0, got -1',
      'lines[3].sku: must match the pattern ^[A-Z]{3}-\\d+$, got string "abc-1"',
      'rate: expected integer, got number 12.5',
    ]);
    expect(variableProblemsMessage(problems)).toMatch(
      /^Variables do not match the template's schema: lines\[1\]\.unit: .*; lines\[2\]\.quantity: expected number, got string "3"; /,
    );
  });

  it('counts lengths in characters, names odd property names in brackets, and stops listing at 50', () => {
    expect(variableValueProblems([{ name: 'n', schema: { type: 'string', maxLength: 3 } }], { n: '😀😀😀' })).toEqual(
      [],
    );
    expect(variableValueProblems([{ name: 'o', schema: { type: 'object', required: ['e-mail'] } }], { o: {} })).toEqual(
      ['o["e-mail"]: is required'],
    );
    const many = variableValueProblems([{ name: 'xs', schema: { type: 'array', items: { type: 'number' } } }], {
      xs: Array.from({ length: 80 }, () => 'x'),
    });
    expect(many).toHaveLength(51);
    expect(many.at(-1)).toBe('… and 30 more');
    expect(variableValueProblems([{ name: 'v', schema: { type: ['string', 'null'] } }], { v: null })).toEqual([]);
    expect(variableValueProblems([{ name: 'v', schema: { type: ['string', 'null'] } }], { v: 3 })).toEqual([
      'v: expected string or null, got number 3',
    ]);
  });

  it('accepts only the supported keywords, well formed', () => {
    expect(schemaProblems(LINES, 'schema')).toEqual([]);
    expect(schemaProblems({ type: 'number', format: 'money' }, 'schema')).toEqual([
      'schema: "format" is not supported; use type, enum, minimum, maximum, minLength, maxLength, pattern, items, minItems, maxItems, properties, required, title, description',
    ]);
    expect(schemaProblems({ type: 'float' }, 'schema')[0]).toContain(
      'schema.type must be one of string, number, integer',
    );
    expect(schemaProblems({ items: { pattern: '(' } }, 'schema')[0]).toMatch(
      /^schema\.items\.pattern is not a valid regular expression/,
    );
    expect(schemaProblems({ properties: { a: 'number' } }, 'schema')).toEqual([
      'schema.properties.a must be an object (a JSON Schema such as {"type": "number"})',
    ]);
    expect(schemaProblems({ minLength: -1, enum: [], required: 'a' }, 'schema')).toHaveLength(3);
  });

  it('are refused at save time, at the declaration, with nothing stored', () => {
    const content = (schema: unknown) => ({
      body: '{{ n }}',
      variables: [{ name: 'n', required: true, schema: schema as never }],
    });
    expect(normalizeContent(content({ type: 'number' })).variables[0]!.schema).toEqual({ type: 'number' });
    try {
      normalizeContent(content({ type: 'number', minimum: 'zero' }));
      throw new Error('accepted');
    } catch (err) {
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).details).toEqual([
        { field: 'content.variables[0].schema', issue: 'schema.minimum must be a number' },
      ]);
    }
  });
});

describe('publish and check with typed variables', () => {
  const base = normalizeContent({
    body: '{{ qty | times: 2 }} {{ code }}',
    variables: [
      { name: 'qty', required: false, default: '2', schema: { type: 'number' } },
      { name: 'code', required: true, schema: { type: 'string', pattern: '^[A-Z]+$' } },
    ],
    sampleData: { code: 'abc' },
  });

  it('refuses a default that breaks its schema', () => {
    expect(analyzeTemplate(base)).toEqual([
      'variable "qty": its default does not match its schema (qty: expected number, got string "2")',
    ]);
  });

  it('checks the sample data against the schemas (a warning: sample data never blocks publishing)', () => {
    const sample = diagnoseTemplate(base).diagnostics.filter((d) => d.source === 'sample_data');
    expect(sample).toEqual([
      {
        source: 'sample_data',
        line: 0,
        column: 0,
        severity: 'warning',
        message: expect.stringContaining(
          'sample data: does not match the variables\' schemas: qty: expected number, got string "2"; code: must match the pattern ^[A-Z]+$, got string "abc"',
        ),
      },
    ]);
  });

  it('bounds a pattern that backtracks for ever', () => {
    const slow = normalizeContent({
      body: '{{ v }}',
      variables: [{ name: 'v', required: true, schema: { type: 'string', pattern: '^(a+)+$' } }],
      sampleData: { v: `${'a'.repeat(40)}!` },
    });
    const started = performance.now();
    const message = diagnoseTemplate(slow).diagnostics.find((d) => d.source === 'sample_data')?.message;
    expect(message).toContain("checking took longer than 500 ms; simplify the schema's patterns");
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('the TypeScript type of the variables', () => {
  it('types each variable by its schema; optional ones and those with a default get a ?', () => {
    const source = variablesInterface(
      [
        { name: 'lines', required: true, description: 'Invoice lines.', schema: LINES },
        { name: 'currency', required: false, hasDefault: true, schema: { type: 'string', enum: ['EUR', 'USD'] } },
        { name: 'note', required: false, schema: { type: ['string', 'null'] } },
        { name: 'order-id', required: true },
      ],
      typeNameFor('Sample invoice'),
    );
    expect(source).toBe(`export interface SampleInvoiceVariables {
  /** Invoice lines. */
  lines: Array<{
    description: string;
    quantity: number;
    unit?: "h" | "pcs";
    sku?: string;
  }>;
  currency?: "EUR" | "USD";
  note?: string | null;
  "order-id": unknown;
}
`);
    expect(typeNameFor('2026 report')).toBe('Template2026ReportVariables');
    expect(typeNameFor('Étiquette d’expédition')).toBe('EtiquetteDExpeditionVariables');
  });
});

describe('locale and time zone of a version', () => {
  it('canonicalises what Intl knows and refuses the rest, naming the field', () => {
    expect(normalizeLocaleSettings({})).toEqual({ settings: { locale: 'en-US', timeZone: 'UTC' }, issues: [] });
    expect(normalizeLocaleSettings({ locale: 'de-de', timeZone: 'europe/berlin' }).settings).toEqual({
      locale: 'de-DE',
      timeZone: 'Europe/Berlin',
    });
    expect(normalizeLocaleSettings({ locale: 'xx_YY!', timeZone: 'Mars/Olympus' }).issues.map((i) => i.field)).toEqual([
      'locale',
      'timeZone',
    ]);
    const content = normalizeContent({ body: 'x', locale: 'fr-CH', timeZone: 'Europe/Zurich' });
    expect([content.locale, content.timeZone]).toEqual(['fr-CH', 'Europe/Zurich']);
    expect(() => normalizeContent({ body: 'x', timeZone: 'CEST' })).toThrow(/timeZone.*is not a time zone/);
  });
});

describe('the gallery', () => {
  it.each(GALLERY_NAMES)('%s is valid content, publishable, with sample data that matches its schemas', (name) => {
    const template = galleryTemplate(name)!;
    expect(template.title).not.toBe('');
    expect(template.description.length).toBeGreaterThan(40);
    const content = normalizeContent(template.content as never);
    expect(content.variables.every((v) => v.schema !== undefined && v.description !== '')).toBe(true);
    expect(analyzeTemplate(content)).toEqual([]);
    expect(diagnoseTemplate(content).diagnostics).toEqual([]);
  });
  it('knows no other names', () => {
    expect(galleryTemplate('invoices')).toBeUndefined();
    expect(galleryTemplate('__proto__')).toBeUndefined();
  });
});
