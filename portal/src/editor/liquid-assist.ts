// The Liquid editor's help for an author: typed closers that the editor already inserted are
// stepped over (never doubled), and completions after `{{ `, `{% ` and `| ` offer what the
// template can use: declared variables and their nested paths (from the sample data and the
// variables' schemas), loop and assigned variables, tags with snippets for if/for/render, and
// the filters, docgen's own named in src/domain/liquid-vocabulary.ts.
import {
  CompletionContext,
  snippet,
  type Completion,
  type CompletionResult,
  type CompletionSource,
} from '@codemirror/autocomplete';
import { html } from '@codemirror/lang-html';
import { closePercentBrace, liquidCompletionSource, liquidLanguage } from '@codemirror/lang-liquid';
import { LanguageSupport } from '@codemirror/language';
import { EditorSelection, Prec, StateEffect, StateField, type EditorState, type Extension } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { DOCGEN_FILTERS } from '../../../src/domain/liquid-vocabulary.ts';

/** What the template can refer to, read when completions are asked for (the draft changes). */
export interface AuthoringVocabulary {
  variables: ReadonlyArray<{ name: string; description?: string; schema?: unknown }>;
  /** The parsed sample data (undefined while it is not valid JSON). */
  sample: unknown;
}

// ---------------------------------------------------------------------------------------------
// Typed closers

const VOID_ELEMENTS = new Set(
  'area base br col embed hr img input link meta param source track wbr'.split(' ').map((s) => s),
);

/** Whether `before` (the line up to the cursor) ends inside an unclosed `{{ … ` or `{% … `. */
function insideLiquid(before: string): boolean {
  const open = Math.max(before.lastIndexOf('{{'), before.lastIndexOf('{%'));
  if (open < 0) return false;
  const rest = before.slice(open + 2);
  return !rest.includes('}}') && !rest.includes('%}');
}

/** The innermost element still open at the end of `text` (a light scan: tags, comments aside). */
function openElement(text: string): string | undefined {
  const stack: string[] = [];
  const tag = /<!--[\s\S]*?-->|<(\/?)([A-Za-z][\w:-]*)(?:[^>"']|"[^"]*"|'[^']*')*?(\/?)>/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    const name = m[2]?.toLowerCase();
    if (!name) continue;
    if (m[1]) {
      const at = stack.lastIndexOf(name);
      if (at >= 0) stack.length = at;
    } else if (!m[3] && !VOID_ELEMENTS.has(name)) stack.push(name);
  }
  return stack.at(-1);
}

/** After `</` was completed to `</p>`: the `p>` an author may type next anyway, at the cursor. */
interface Absorb {
  pos: number;
  rest: string;
}
const setAbsorb = StateEffect.define<Absorb | null>();
const absorbField = StateField.define<Absorb | null>({
  create: () => null,
  update(value, tr) {
    for (const e of tr.effects) if (e.is(setAbsorb)) return e.value;
    return tr.docChanged || tr.selection ? null : value;
  },
});

/**
 * Auto-closing inserts `%}`, `}}` and `</p>` ahead of the cursor, and completes `</` to `</p>`;
 * an author who types those closers anyway steps over (or through) them instead of doubling them.
 */
const typedClosers = EditorView.inputHandler.of((view, from, to, text) => {
  const { state } = view;
  if (from !== to || text.length !== 1 || state.readOnly || state.selection.ranges.length > 1) return false;
  const absorb = state.field(absorbField, false);
  if (absorb && absorb.pos === from && absorb.rest.startsWith(text)) {
    view.dispatch({ effects: setAbsorb.of(absorb.rest.length > 1 ? { pos: from, rest: absorb.rest.slice(1) } : null) });
    return true;
  }
  const line = state.doc.lineAt(from);
  const before = state.sliceDoc(line.from, from);
  const after = state.sliceDoc(from, line.to);
  const stepOver = () => {
    view.dispatch({ selection: EditorSelection.cursor(from + 1), scrollIntoView: true, userEvent: 'input.type' });
    return true;
  };
  // Liquid: `{% … %}` and `{{ … }}`, closed by the editor when the opener was typed.
  if (((text === '%' && after.startsWith('%}')) || (text === '}' && after.startsWith('}'))) && insideLiquid(before))
    return stepOver();
  // HTML: `<` then `/` right before the closing tag of the element being written: that closing
  // tag is the one the author is typing, so the cursor moves into it (the `<` is its own).
  if (text === '/' && before.endsWith('<')) {
    const close = /^<\/([A-Za-z][\w:-]*)\s*>/.exec(after);
    const open = openElement(state.sliceDoc(Math.max(0, from - 20_000), from - 1));
    if (open && close && open === close[1]!.toLowerCase()) {
      view.dispatch({
        changes: { from: from - 1, to: from },
        selection: EditorSelection.cursor(from + 1),
        scrollIntoView: true,
        userEvent: 'input.type',
      });
      return true;
    }
    // Otherwise complete the closing tag, and take the name and `>` if they are typed next.
    if (open) {
      const insert = `/${open}>`;
      view.dispatch({
        changes: { from, insert },
        selection: EditorSelection.cursor(from + insert.length),
        effects: setAbsorb.of({ pos: from + insert.length, rest: insert.slice(1) }),
        scrollIntoView: true,
        userEvent: 'input.type',
      });
      return true;
    }
  }
  // …and the name and `>` of that closing tag, typed over.
  if (/<\/[\w:-]*$/.test(before) && after.startsWith(text) && /^[\w:-]*>/.test(after) && /[\w:>-]/.test(text))
    return stepOver();
  return false;
});

// ---------------------------------------------------------------------------------------------
// Completions

/** What is known of a value's shape: its keys, its items (a list), its types. */
interface Shape {
  keys: Map<string, Shape>;
  item?: Shape;
  types: Set<string>;
}

const newShape = (): Shape => ({ keys: new Map(), types: new Set() });
const MAX_DEPTH = 8;
const MAX_KEYS = 200;
const MAX_ITEMS = 20;

function child(shape: Shape, key: string): Shape | undefined {
  let next = shape.keys.get(key);
  if (!next && shape.keys.size < MAX_KEYS) shape.keys.set(key, (next = newShape()));
  return next;
}

function addValue(shape: Shape, value: unknown, depth = 0): void {
  if (depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    shape.types.add('list');
    shape.item ??= newShape();
    for (const v of value.slice(0, MAX_ITEMS)) addValue(shape.item, v, depth + 1);
  } else if (value !== null && typeof value === 'object') {
    shape.types.add('object');
    for (const [k, v] of Object.entries(value)) {
      const next = child(shape, k);
      if (next) addValue(next, v, depth + 1);
    }
  } else shape.types.add(value === null ? 'null' : typeof value);
}

function addSchema(shape: Shape, schema: unknown, depth = 0): void {
  if (depth > MAX_DEPTH || schema === null || typeof schema !== 'object') return;
  const s = schema as { type?: unknown; properties?: unknown; items?: unknown };
  for (const t of Array.isArray(s.type) ? s.type : [s.type])
    if (typeof t === 'string') shape.types.add(t === 'array' ? 'list' : t);
  if (s.properties && typeof s.properties === 'object')
    for (const [k, v] of Object.entries(s.properties)) {
      const next = child(shape, k);
      if (next) addSchema(next, v, depth + 1);
    }
  if (s.items && typeof s.items === 'object') addSchema((shape.item ??= newShape()), s.items, depth + 1);
}

/** A Liquid path (`order.lines[0].sku`, `x['a b']`) as segments; `[]` for a numeric index. */
function pathOf(expression: string): string[] {
  const path: string[] = [];
  for (const m of expression.matchAll(/([A-Za-z_][\w-]*)|\[\s*(?:'([^']*)'|"([^"]*)"|(\d+)|[^\]]*)\s*\]/g))
    path.push(m[1] ?? m[2] ?? m[3] ?? '[]');
  return path;
}

interface Scope {
  root: Shape;
  /** Declared variables (name → type shown beside it). */
  declared: Map<string, string>;
  /** Loop and assigned variables: name → the path they stand for (ending in `[]` for items). */
  aliases: Map<string, { path: string[]; detail: string }>;
}

function typeText(shape: Shape | undefined): string {
  return shape && shape.types.size > 0 ? [...shape.types].join(' | ') : '';
}

function scopeAt(state: EditorState, pos: number, vocabulary: AuthoringVocabulary): Scope {
  const root = newShape();
  addValue(root, vocabulary.sample);
  const declared = new Map<string, string>();
  for (const v of vocabulary.variables) {
    if (!v.name) continue;
    const shape = child(root, v.name);
    if (shape && v.schema) addSchema(shape, v.schema);
    declared.set(v.name, typeText(shape) || 'declared');
  }
  const aliases = new Map<string, { path: string[]; detail: string }>();
  const before = state.sliceDoc(Math.max(0, pos - 50_000), pos);
  for (const m of before.matchAll(/\{%-?\s*(?:for|tablerow)\s+([A-Za-z_][\w-]*)\s+in\s+([A-Za-z_][\w.\-[\]'"]*)/g))
    aliases.set(m[1]!, { path: [...pathOf(m[2]!), '[]'], detail: `each of ${m[2]}` });
  for (const m of before.matchAll(/\{%-?\s*assign\s+([A-Za-z_][\w-]*)\s*=\s*([A-Za-z_][\w.\-[\]'"]*)\s*-?%\}/g))
    aliases.set(m[1]!, { path: pathOf(m[2]!), detail: `= ${m[2]}` });
  for (const m of before.matchAll(/\{%-?\s*(?:assign|capture)\s+([A-Za-z_][\w-]*)/g))
    if (!aliases.has(m[1]!)) aliases.set(m[1]!, { path: [], detail: 'assigned' });
  return { root, declared, aliases };
}

function resolve(scope: Scope, path: readonly string[], depth = 0): Shape | undefined {
  const [head, ...rest] = path;
  if (head === undefined) return undefined;
  const alias = scope.aliases.get(head);
  let shape: Shape | undefined;
  if (alias && depth < 5) shape = alias.path.length > 0 ? resolve(scope, alias.path, depth + 1) : undefined;
  else shape = scope.root.keys.get(head);
  for (const segment of rest) {
    if (!shape) return undefined;
    shape = segment === '[]' || segment === 'first' || segment === 'last' ? shape.item : shape.keys.get(segment);
  }
  return shape;
}

function variableOptions(scope: Scope): Completion[] {
  const options = new Map<string, Completion>();
  for (const [name, detail] of scope.declared) options.set(name, { label: name, type: 'variable', detail, boost: 2 });
  for (const [name, alias] of scope.aliases)
    options.set(name, { label: name, type: 'variable', detail: alias.detail, boost: 3 });
  for (const [name, shape] of scope.root.keys)
    if (!options.has(name))
      options.set(name, { label: name, type: 'variable', detail: `sample data ${typeText(shape)}`.trim(), boost: 1 });
  return [...options.values()];
}

function propertyOptions(scope: Scope, path: readonly string[]): Completion[] {
  const shape = resolve(scope, path);
  if (!shape) return [];
  const options: Completion[] = [...shape.keys].map(([label, s]) => ({
    label,
    type: 'property',
    detail: typeText(s),
  }));
  if (shape.item)
    for (const label of ['first', 'last', 'size']) options.push({ label, type: 'property', detail: 'of the list' });
  return options;
}

/** Snippets for the block tags an author writes most; each replaces a `%}` already typed after it. */
const SNIPPETS: Array<{ label: string; template: string; detail: string }> = [
  { label: 'if', template: 'if ${condition} %}\n\t${}\n{% endif %}', detail: '… {% endif %}' },
  { label: 'for', template: 'for ${item} in ${items} %}\n\t${}\n{% endfor %}', detail: '… {% endfor %}' },
  { label: 'render', template: "render '${partial}' %}", detail: "'partial'" },
];

const SNIPPET_COMPLETIONS: Completion[] = SNIPPETS.map(({ label, template, detail }) => {
  const insert = snippet(template);
  return {
    label,
    type: 'keyword',
    detail: `snippet ${detail}`,
    boost: 5,
    apply: (view, completion, from, to) => {
      const closer = /^\s*-?%\}/.exec(view.state.sliceDoc(to, to + 8));
      insert(view, completion, from, closer ? to + closer[0].length : to);
    },
  };
});

const FILTER_COMPLETIONS: Completion[] = Object.entries(DOCGEN_FILTERS).map(([label, f]) => ({
  label,
  type: 'function',
  detail: f.usage,
  info: f.summary,
  boost: 1,
}));

function completionSource(vocabulary: () => AuthoringVocabulary): CompletionSource {
  return (context) => {
    const scope = scopeAt(context.state, context.pos, vocabulary());
    const inner = liquidCompletionSource({
      filters: FILTER_COMPLETIONS,
      tags: SNIPPET_COMPLETIONS,
      variables: variableOptions(scope),
      properties: (path) => propertyOptions(scope, path),
    });
    const found = inner(context) as CompletionResult | null;
    if (found || context.explicit) return found;
    // Right after `{{ `, `{% ` or `| ` nothing is typed yet: offer what fits there anyway.
    const before = context.state.sliceDoc(Math.max(0, context.pos - 8), context.pos);
    if (!/(?:\{\{-?|\{%-?|\|)\s*$/.test(before)) return null;
    return inner(new CompletionContext(context.state, context.pos, true)) as CompletionResult | null;
  };
}

const baseHtml = html();

/** Liquid over HTML, with the completions above and typed closers stepped over. */
export function liquidWithAssist(vocabulary: () => AuthoringVocabulary): Extension {
  return [
    absorbField,
    Prec.highest(typedClosers),
    new LanguageSupport(liquidLanguage, [
      baseHtml.support,
      liquidLanguage.data.of({ autocomplete: completionSource(vocabulary) }),
      baseHtml.language.data.of({ closeBrackets: { brackets: ['{'] } }),
      closePercentBrace,
    ]),
  ];
}
