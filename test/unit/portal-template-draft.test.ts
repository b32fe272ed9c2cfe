// The editor's reading of variable defaults (plain text; JSON only for lists and objects) and of
// which suggested variables must be required.
import { describe, expect, it } from 'vitest';
import {
  blankDraft,
  defaultDraft,
  defaultValueOf,
  usedWithoutDefault,
  type VariableDraft,
} from '../../portal/src/editor/template-draft.ts';

const variable = (v: Partial<VariableDraft>): VariableDraft => ({
  name: 'x',
  required: false,
  defaultText: '',
  description: '',
  ...v,
});

describe('variable defaults', () => {
  it('takes text as typed, JSON only for lists and objects', () => {
    expect(defaultValueOf(variable({ defaultText: 'Ada Lovelace' }))).toEqual({ value: 'Ada Lovelace' });
    expect(defaultValueOf(variable({ defaultText: '42' }))).toEqual({ value: '42' });
    expect(defaultValueOf(variable({ defaultText: '[1, 2]' }))).toEqual({ value: [1, 2] });
    expect(defaultValueOf(variable({ defaultText: '{"a": 1}' }))).toEqual({ value: { a: 1 } });
    expect(defaultValueOf(variable({ defaultText: '{"a": ' })).problem).toMatch(/not valid JSON/);
    expect(defaultValueOf(variable({ defaultText: '' }))).toEqual({});
  });

  it('keeps numbers and booleans when the schema or the stored default says so', () => {
    expect(defaultValueOf(variable({ defaultText: '3', schema: { type: 'number' } }))).toEqual({ value: 3 });
    expect(defaultValueOf(variable({ defaultText: 'true', schema: { type: 'boolean' } }))).toEqual({ value: true });
    for (const stored of [3, true, 'text', { a: [1] }]) {
      const d = defaultDraft(stored);
      expect(defaultValueOf(variable(d)), JSON.stringify(stored)).toEqual({ value: stored });
    }
  });
});

describe('suggested variables', () => {
  it('are required only when printed without a default', () => {
    const draft = {
      ...blankDraft(),
      body: "{{ name }} {{ motto | default: 'hi' }} {% if vip %}VIP{% endif %} {% for l in lines %}{% endfor %}",
    };
    expect(usedWithoutDefault('name', draft)).toBe(true);
    expect(usedWithoutDefault('motto', draft)).toBe(false);
    expect(usedWithoutDefault('vip', draft)).toBe(false);
    expect(usedWithoutDefault('lines', draft)).toBe(false);
    expect(usedWithoutDefault('nam', draft)).toBe(false);
  });
});
