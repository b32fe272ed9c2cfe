// Pure parts of the admin plane: the admin token check, template content normalisation, the
// preview's variable rules and the CLI's variables-file parser.
import { toJson } from '@bufbuild/protobuf';
import { ValueSchema } from '@bufbuild/protobuf/wkt';
import { describe, expect, it } from 'vitest';
import { normalizeContent } from '../../src/admin/template-content.ts';
import { parseVariables } from '../../src/cli/admin/template-files.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import { isAdminAuthorization } from '../../src/auth/operator-token.ts';

function domainError(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error('expected a DomainError');
}

describe('admin token check', () => {
  const token = 'a-long-operator-token-0123456789';

  it('accepts exactly "Bearer <token>"', () => {
    expect(isAdminAuthorization(`Bearer ${token}`, token)).toBe(true);
    expect(isAdminAuthorization(`bearer ${token}`, token)).toBe(true);
  });

  it('refuses missing, malformed and wrong values', () => {
    for (const header of [
      null,
      undefined,
      '',
      token,
      `Basic ${token}`,
      `Bearer ${token}x`,
      `Bearer ${token.slice(1)}`,
      `Bearer ${token} extra`,
      'Bearer ',
    ]) {
      expect(isAdminAuthorization(header, token), String(header)).toBe(false);
    }
  });

  it('an empty configured token accepts nothing', () => {
    expect(isAdminAuthorization('Bearer ', '')).toBe(false);
    expect(isAdminAuthorization('Bearer x', '')).toBe(false);
  });
});

describe('template content', () => {
  it('fills the defaults and keeps "no default" apart from a null default', () => {
    const content = normalizeContent({
      body: '<p>{{ a }}</p>',
      variables: [{ name: 'a', required: true }, { name: 'b', default: null }, { name: 'c' }],
    });
    expect(content.css).toBe('');
    expect(content.partials).toEqual({});
    expect(content.pdfOptions).toEqual(DEFAULT_PDF_OPTIONS);
    expect(content.variables).toEqual([
      { name: 'a', required: true, description: '' },
      { name: 'b', required: false, description: '', default: null },
      { name: 'c', required: false, description: '' },
    ]);
    expect('default' in content.variables[2]!).toBe(false);
  });

  it('canonicalises the page size and takes margins as lengths', () => {
    const content = normalizeContent({
      body: 'x',
      pdfOptions: { pageSize: 'letter', margins: { top: '10mm', left: '.5in' }, printBackground: false },
    });
    expect(content.pdfOptions).toMatchObject({
      pageSize: 'Letter',
      printBackground: false,
      margins: { top: '10mm', right: '0', bottom: '0', left: '.5in' },
    });
  });

  it('names every problem', () => {
    const err = domainError(() =>
      normalizeContent({
        body: '  ',
        partials: { 'bad name': 'x' },
        variables: [{ name: '1st' }, { name: 'ok' }, { name: 'ok' }],
        pdfOptions: { pageSize: 'B5', margins: { top: 'ten' } },
      }),
    );
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.details.map((d) => d.field)).toEqual([
      'content.body',
      'content.partials',
      'content.variables[0].name',
      'content.variables[2].name',
      'content.pdfOptions.pageSize',
      'content.pdfOptions.margins.top',
    ]);
    expect(err.message).toContain('variable `ok` is declared twice');
  });

  it('refuses content over 1 MiB', () => {
    expect(domainError(() => normalizeContent({ body: 'x'.repeat(1024 * 1024 + 1) })).message).toContain(
      'at most 1048576 bytes',
    );
  });
});

describe('CLI variables file', () => {
  it('reads the list form and the object form alike', () => {
    const list = parseVariables([
      { name: 'customer', required: true, description: 'Who' },
      { name: 'total', default: { amount: 1 } },
    ]);
    const object = parseVariables({
      customer: { required: true, description: 'Who' },
      total: { default: { amount: 1 } },
    });
    for (const declarations of [list, object]) {
      expect(declarations.map((d) => [d.name, d.required, d.description])).toEqual([
        ['customer', true, 'Who'],
        ['total', false, ''],
      ]);
      expect(declarations[0]!.defaultValue).toBeUndefined();
      expect(toJson(ValueSchema, declarations[1]!.defaultValue!)).toEqual({ amount: 1 });
    }
  });

  it('refuses unknown fields and wrong types', () => {
    expect(() => parseVariables([{ name: 'a', requird: true }])).toThrow('unknown field "requird"');
    expect(() => parseVariables({ a: { name: 'a' } })).toThrow('unknown field "name"');
    expect(() => parseVariables([{ name: 'a', required: 'yes' }])).toThrow('"required" must be true or false');
    expect(() => parseVariables('a,b')).toThrow('expected a JSON list');
  });
});
