// Publish-time checks of a version (docs/interface.md#templates): everything that would make every render of
// it fail, reported up front, each problem as one sentence naming what and where.

import type { Template } from 'liquidjs';
import type { TemplateVersionContent } from '../../domain/template.ts';
import { validatePdfOptions } from '../pdf-options.ts';
import { createLiquidEngine, PartialStore } from './liquid-engine.ts';

/** Names a template can use in {{ }}: Liquid identifiers. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const MAX_DECLARED_SHOWN = 30;

interface Source {
  /** How problems name it: "template body", "partial \"footer\"", ... */
  label: string;
  text: string;
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

function declaredText(names: string[]): string {
  if (names.length === 0) return 'the template declares no variables';
  const shown = names.slice(0, MAX_DECLARED_SHOWN).join(', ');
  return `declared: ${shown}${names.length > MAX_DECLARED_SHOWN ? ', ...' : ''}`;
}

function checkShape(content: TemplateVersionContent): string[] {
  const problems: string[] = [];
  if (typeof content.body !== 'string') problems.push('body must be a string');
  if (typeof content.css !== 'string') problems.push('css must be a string');
  const partials = content.partials as unknown;
  if (partials === null || typeof partials !== 'object' || Array.isArray(partials)) {
    problems.push('partials must be an object of name to Liquid source');
  } else {
    for (const [name, text] of Object.entries(partials)) {
      if (typeof text !== 'string') problems.push(`partial ${JSON.stringify(name)} must be a string`);
      if (name.trim() === '') problems.push('a partial has an empty name');
    }
  }
  if (!Array.isArray(content.variables)) problems.push('variables must be an array of declarations');
  return problems;
}

function checkDeclarations(content: TemplateVersionContent): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const d of content.variables) {
    const name = (d as { name?: unknown }).name;
    if (typeof name !== 'string' || !VARIABLE_NAME.test(name)) {
      problems.push(`variable name ${JSON.stringify(name)} is not valid; use letters, digits, _ or -, starting with a letter or _`);
      continue;
    }
    if (seen.has(name)) problems.push(`variable "${name}" is declared more than once`);
    seen.add(name);
    if (typeof d.required !== 'boolean') problems.push(`variable "${name}": required must be true or false`);
    if (d.required === true && d.default !== undefined) {
      problems.push(`variable "${name}" is required and has a default, which would never be used; make it optional or drop the default`);
    }
  }
  return problems;
}

/**
 * Returns the problems that make a version unpublishable ([] when it is fine): Liquid syntax
 * errors (body, partials, header/footer templates), global variables used but not declared,
 * partials referenced but missing, invalid variable declarations and invalid PDF options.
 */
export function analyzeTemplate(content: TemplateVersionContent): string[] {
  const shape = checkShape(content);
  if (shape.length > 0) return shape;
  const problems = [...checkDeclarations(content), ...validatePdfOptions(content.pdfOptions)];

  const store = new PartialStore();
  const liquid = createLiquidEngine(store);

  // Parse every source on its own, so one broken partial does not hide the others' problems.
  const parsedPartials: Record<string, string> = {};
  for (const [name, text] of Object.entries(content.partials)) {
    try {
      liquid.parse(text, name);
      parsedPartials[name] = text;
    } catch (err) {
      problems.push(`partial ${JSON.stringify(name)}: ${firstLine(err)}`);
      parsedPartials[name] = ''; // analysed as empty; its syntax error is reported above
    }
  }

  const sources: Source[] = [{ label: 'template body', text: content.body }];
  const pdf = content.pdfOptions as Partial<typeof content.pdfOptions> | undefined;
  if (typeof pdf?.headerTemplate === 'string' && pdf.headerTemplate !== '') sources.push({ label: 'header template', text: pdf.headerTemplate });
  if (typeof pdf?.footerTemplate === 'string' && pdf.footerTemplate !== '') sources.push({ label: 'footer template', text: pdf.footerTemplate });

  const declared = new Set(content.variables.map((d) => d.name));
  const declaredNames = [...declared];
  const undeclared = new Map<string, string>(); // name -> where first used
  const missingPartials = new Map<string, string>(); // name -> who references it

  // Analysis follows {% render %}/{% include %} into the partials; a missing one reads as empty
  // (and is recorded) so that everything else still gets checked.
  store.set(parsedPartials);
  store.lenient = true;
  for (const source of sources) {
    let templates: Template[];
    try {
      templates = liquid.parse(source.text);
    } catch (err) {
      problems.push(`${source.label}: ${firstLine(err)}`);
      continue;
    }
    store.missing.clear();
    try {
      const analysis = liquid.analyzeSync(templates, { partials: true });
      for (const [name, uses] of Object.entries(analysis.globals)) {
        if (declared.has(name) || undeclared.has(name)) continue;
        const at = uses[0]?.location;
        const where = at?.file ? `partial ${JSON.stringify(at.file)}` : source.label;
        const position = at ? ` (line ${at.row}, column ${at.col})` : '';
        undeclared.set(name, `${where}${position}`);
      }
    } catch (err) {
      problems.push(`${source.label}: ${firstLine(err)}`);
    }
    for (const name of store.missing) {
      if (!missingPartials.has(name)) missingPartials.set(name, source.label);
    }
  }

  for (const [name, where] of missingPartials) {
    problems.push(`${where} references partial ${JSON.stringify(name)}, which this version does not define`);
  }
  for (const [name, where] of undeclared) {
    problems.push(`variable "${name}" is used in ${where} but not declared (${declaredText(declaredNames)})`);
  }
  return problems;
}
