// The TypeScript type of a version's variables, from its declarations and their schemas (the
// one home of that rule: `docgen admin template types` prints it, the portal can show it).
// Browser-safe: plain string building.

import type { SchemaType, VariableSchema } from './variable-schema.ts';

export interface DeclarationForType {
  name: string;
  required: boolean;
  /** A default makes the variable optional for clients even when the template needs it. */
  hasDefault?: boolean;
  description?: string;
  schema?: VariableSchema | undefined;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function key(name: string): string {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

function doc(text: string | undefined, indent: string): string {
  const t = (text ?? '').trim();
  if (t === '') return '';
  const lines = t.replaceAll('*/', '*\\/').split(/\r?\n/);
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

const PRIMITIVE: Record<Exclude<SchemaType, 'object' | 'array'>, string> = {
  string: 'string',
  number: 'number',
  integer: 'number',
  boolean: 'boolean',
  null: 'null',
};

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  return unique.length === 0 ? 'never' : unique.join(' | ');
}

function arrayOf(item: string): string {
  return /^[A-Za-z_$][\w$<>, ]*$/.test(item) ? `${item}[]` : `Array<${item}>`;
}

function objectType(schema: VariableSchema, indent: string): string {
  const properties = Object.entries(schema.properties ?? {});
  if (properties.length === 0) return 'Record<string, unknown>';
  const required = new Set(schema.required ?? []);
  const inner = `${indent}  `;
  const lines = properties.map(
    ([name, sub]) =>
      `${doc(sub.description ?? sub.title, inner)}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${schemaType(sub, inner)};`,
  );
  return `{\n${lines.join('\n')}\n${indent}}`;
}

function typeFor(type: SchemaType, schema: VariableSchema, indent: string): string {
  if (type === 'object') return objectType(schema, indent);
  if (type === 'array') return arrayOf(schema.items ? schemaType(schema.items, indent) : 'unknown');
  return PRIMITIVE[type];
}

/** The TypeScript type of values matching `schema` (`unknown` where the schema says nothing). */
export function schemaType(schema: VariableSchema | undefined, indent = ''): string {
  if (!schema) return 'unknown';
  if (schema.enum !== undefined) return union(schema.enum.map((v) => JSON.stringify(v)));
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length === 0) {
    // No type: the shape keywords still say what it is.
    if (schema.properties !== undefined) return objectType(schema, indent);
    if (schema.items !== undefined) return arrayOf(schemaType(schema.items, indent));
    return 'unknown';
  }
  return union(types.map((t) => typeFor(t, schema, indent)));
}

/** `SampleInvoiceVariables` from "Sample invoice". */
export function typeNameFor(templateName: string): string {
  const words = templateName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '') // accents, split off their letters
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .split(' ');
  let name = words
    .filter((w) => w !== '')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
  if (name === '' || /^\d/.test(name)) name = `Template${name}`;
  return `${name}Variables`;
}

/**
 * An exported interface of the variables a client sends: required ones without a default are
 * required properties, the others optional; each typed by its schema (`unknown` without one).
 */
export function variablesInterface(declarations: readonly DeclarationForType[], typeName: string): string {
  const lines = declarations.map((d) => {
    const optional = !d.required || d.hasDefault === true;
    return `${doc(d.description, '  ')}  ${key(d.name)}${optional ? '?' : ''}: ${schemaType(d.schema, '  ')};`;
  });
  const body = lines.length === 0 ? '' : `\n${lines.join('\n')}\n`;
  return `export interface ${typeName} {${body}}\n`;
}
