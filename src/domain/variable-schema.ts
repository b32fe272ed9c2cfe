// Typed variables (docs/templates.md#typed-variables): a declaration's `schema`, a subset of
// JSON Schema, and the one rule for checking values against it. Used by the admin plane
// (is a schema well formed? does the sample data match?), by the Liquid worker process (does a
// generation's data match? checked there because a `pattern` is the author's regular
// expression, and the worker is the process whose CPU time is bounded) and by the portal.
// No imports at run time: the worker may read only this file of src/domain/ (Node's
// permission model), and a browser can run it as it is.

export const SCHEMA_TYPES = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The supported subset of JSON Schema. */
export interface VariableSchema {
  type?: SchemaType | SchemaType[];
  enum?: Json[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  /** A regular expression (JavaScript syntax, Unicode mode) a string must contain a match of. */
  pattern?: string;
  items?: VariableSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, VariableSchema>;
  required?: string[];
  title?: string;
  description?: string;
}

export const SCHEMA_KEYWORDS = [
  'type',
  'enum',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'items',
  'minItems',
  'maxItems',
  'properties',
  'required',
  'title',
  'description',
] as const;

/** Nesting of `items`/`properties` a schema may have. */
export const MAX_SCHEMA_DEPTH = 16;
/** Problems one check reports at most (the rest are counted). */
export const MAX_LISTED_PROBLEMS = 50;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property step of a path: `.name`, or `["odd-name"]` when it is not an identifier. */
export function propertyPath(parent: string, key: string): string {
  return IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

// ---------------------------------------------------------------------------------------------
// Is a schema well formed?

function isCount(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function checkSchemaNode(schema: unknown, at: string, depth: number, problems: string[]): void {
  if (!isObject(schema)) {
    problems.push(`${at} must be an object (a JSON Schema such as {"type": "number"})`);
    return;
  }
  if (depth > MAX_SCHEMA_DEPTH) {
    problems.push(`${at} is nested more than ${MAX_SCHEMA_DEPTH} levels deep`);
    return;
  }
  for (const key of Object.keys(schema)) {
    if (!(SCHEMA_KEYWORDS as readonly string[]).includes(key))
      problems.push(`${at}: "${key}" is not supported; use ${SCHEMA_KEYWORDS.join(', ')}`);
  }
  const s = schema;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.length === 0 || types.some((t) => !(SCHEMA_TYPES as readonly unknown[]).includes(t)))
      problems.push(`${at}.type must be one of ${SCHEMA_TYPES.join(', ')} (or a list of them)`);
  }
  if (s.enum !== undefined && (!Array.isArray(s.enum) || s.enum.length === 0))
    problems.push(`${at}.enum must be a non-empty list of the allowed values`);
  for (const key of ['minimum', 'maximum'] as const) {
    if (s[key] !== undefined && !(typeof s[key] === 'number' && Number.isFinite(s[key])))
      problems.push(`${at}.${key} must be a number`);
  }
  for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems'] as const) {
    if (s[key] !== undefined && !isCount(s[key])) problems.push(`${at}.${key} must be a whole number, 0 or more`);
  }
  if (s.pattern !== undefined) {
    if (typeof s.pattern !== 'string' || s.pattern.length > 1000) {
      problems.push(`${at}.pattern must be a regular expression of at most 1000 characters`);
    } else {
      try {
        new RegExp(s.pattern, 'u');
      } catch (err) {
        problems.push(`${at}.pattern is not a valid regular expression (${(err as Error).message})`);
      }
    }
  }
  for (const key of ['title', 'description'] as const) {
    if (s[key] !== undefined && typeof s[key] !== 'string') problems.push(`${at}.${key} must be a string`);
  }
  if (s.items !== undefined) checkSchemaNode(s.items, `${at}.items`, depth + 1, problems);
  if (s.properties !== undefined) {
    if (!isObject(s.properties)) problems.push(`${at}.properties must be an object of property name to schema`);
    else
      for (const [name, sub] of Object.entries(s.properties))
        checkSchemaNode(sub, propertyPath(`${at}.properties`, name), depth + 1, problems);
  }
  if (s.required !== undefined && !(Array.isArray(s.required) && s.required.every((r) => typeof r === 'string')))
    problems.push(`${at}.required must be a list of property names`);
}

/** What is wrong with a declaration's schema ([] when it is usable); `at` names it in the messages. */
export function schemaProblems(schema: unknown, at: string): string[] {
  const problems: string[] = [];
  checkSchemaNode(schema, at, 0, problems);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Does a value match?

function typeOf(value: unknown): 'string' | 'number' | 'boolean' | 'object' | 'array' | 'null' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  const t = typeof value;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'object';
}

/** A value as messages show it: its JSON type, and the value itself when short. */
export function describeValue(value: unknown): string {
  const type = typeOf(value);
  if (type === 'null') return 'null';
  if (type === 'array') return `an array of ${(value as unknown[]).length}`;
  if (type === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${type} ${text.length > 40 ? `${text.slice(0, 37)}…"` : text}`;
}

function matchesType(value: unknown, type: SchemaType): boolean {
  if (type === 'integer') return typeof value === 'number' && Number.isInteger(value);
  return typeOf(value) === type;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every(
    (k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

class Checker {
  readonly problems: string[] = [];
  hidden = 0;
  private readonly patterns = new Map<string, RegExp>();

  report(path: string, problem: string): void {
    if (this.problems.length < MAX_LISTED_PROBLEMS) this.problems.push(`${path}: ${problem}`);
    else this.hidden += 1;
  }

  private regex(pattern: string): RegExp {
    let re = this.patterns.get(pattern);
    if (!re) {
      re = new RegExp(pattern, 'u');
      this.patterns.set(pattern, re);
    }
    return re;
  }

  check(schema: VariableSchema, value: unknown, path: string): void {
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (!types.some((t) => matchesType(value, t))) {
        this.report(path, `expected ${types.join(' or ')}, got ${describeValue(value)}`);
        return; // the other keywords would only repeat the same problem
      }
    }
    if (schema.enum !== undefined && !schema.enum.some((allowed) => sameJson(allowed, value))) {
      const allowed = schema.enum.map((v) => JSON.stringify(v)).join(', ');
      this.report(path, `expected one of ${allowed}, got ${describeValue(value)}`);
      return;
    }
    if (typeof value === 'number') this.checkNumber(schema, value, path);
    else if (typeof value === 'string') this.checkString(schema, value, path);
    else if (Array.isArray(value)) this.checkArray(schema, value, path);
    else if (isObject(value)) this.checkObject(schema, value, path);
  }

  private checkNumber(schema: VariableSchema, value: number, path: string): void {
    if (schema.minimum !== undefined && value < schema.minimum)
      this.report(path, `must be at least ${schema.minimum}, got ${value}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      this.report(path, `must be at most ${schema.maximum}, got ${value}`);
  }

  private checkString(schema: VariableSchema, value: string, path: string): void {
    // Characters as people count them: code points, not UTF-16 units.
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength)
      this.report(path, `must be at least ${plural(schema.minLength, 'character')} long, got ${describeValue(value)}`);
    if (schema.maxLength !== undefined && length > schema.maxLength)
      this.report(path, `must be at most ${plural(schema.maxLength, 'character')} long, got ${length}`);
    if (schema.pattern !== undefined && !this.regex(schema.pattern).test(value))
      this.report(path, `must match the pattern ${schema.pattern}, got ${describeValue(value)}`);
  }

  private checkArray(schema: VariableSchema, value: unknown[], path: string): void {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      this.report(path, `must have at least ${plural(schema.minItems, 'item')}, got ${value.length}`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      this.report(path, `must have at most ${plural(schema.maxItems, 'item')}, got ${value.length}`);
    if (schema.items !== undefined) {
      const items = schema.items;
      value.forEach((item, i) => this.check(items, item, `${path}[${i}]`));
    }
  }

  private checkObject(schema: VariableSchema, value: Record<string, unknown>, path: string): void {
    for (const name of schema.required ?? []) {
      if (!Object.hasOwn(value, name) || value[name] === undefined)
        this.report(propertyPath(path, name), 'is required');
    }
    for (const [name, sub] of Object.entries(schema.properties ?? {})) {
      if (Object.hasOwn(value, name) && value[name] !== undefined)
        this.check(sub, value[name], propertyPath(path, name));
    }
  }
}

/** A declaration as far as checking its value goes. */
export interface TypedDeclaration {
  name: string;
  schema?: VariableSchema | undefined;
}

/**
 * Every problem of `values` against the declarations' schemas, each as `path: problem`
 * (`lines[2].quantity: expected number, got string "3"`), at most MAX_LISTED_PROBLEMS of them
 * and then `… and N more`. Variables absent from `values` are not checked (required ones are
 * caught before, by name).
 */
export function variableValueProblems(
  declarations: readonly TypedDeclaration[],
  values: Readonly<Record<string, unknown>>,
): string[] {
  const checker = new Checker();
  for (const d of declarations) {
    if (d.schema === undefined || !Object.hasOwn(values, d.name) || values[d.name] === undefined) continue;
    checker.check(d.schema, values[d.name], IDENTIFIER.test(d.name) ? d.name : JSON.stringify(d.name));
  }
  const problems = checker.problems;
  if (checker.hidden > 0) problems.push(`… and ${checker.hidden} more`);
  return problems;
}

/** The one message of a generation whose variables break their schemas. */
export function variableProblemsMessage(problems: readonly string[]): string {
  return `Variables do not match the template's schema: ${problems.join('; ')}`;
}
