// Publish-time checks of a version (docs/interface.md#templates): everything that would make
// every render of it fail, reported up front, each problem as one sentence naming what and
// where, and as a diagnostic at its place (the content check and the portal's editor show those).

import type { Template } from 'liquidjs';
import type { TemplateVersionContent } from '../../domain/template.ts';
import type { DiagnosticSource, TemplateDiagnostic } from '../../domain/template-diagnostics.ts';
import { liquidErrorDiagnostic } from './liquid-diagnostic.ts';
import { validatePdfOptions } from '../pdf-options.ts';
import { createLiquidEngine, PartialStore } from './liquid-engine.ts';
import { resolveVariables } from './variables.ts';
import { isPlainObject } from '../../domain/json.ts';
import { errorMessage } from '../../domain/errors.ts';
import { authorFacingLiquidMessage } from './liquid-error-text.ts';
import { headerFooterResourceProblem } from './header-footer-resources.ts';
import { describeReference, unloadableReferences } from './resource-references.ts';
import { variableValueProblems } from '../../domain/variable-schema.ts';
import { createContext, runInContext } from 'node:vm';

/** Names a template can use in {{ }}: Liquid identifiers. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const MAX_DECLARED_SHOWN = 30;

interface Source {
  /** How problems name it: "template body", "partial \"footer\"", ... */
  label: string;
  /** Where diagnostics place it. */
  source: DiagnosticSource;
  text: string;
}

/** A problem as one sentence (publish refusals) and as a placed diagnostic. */
interface Finding {
  text: string;
  diagnostic: TemplateDiagnostic;
}

function unplaced(source: DiagnosticSource, text: string, severity: TemplateDiagnostic['severity'] = 'error'): Finding {
  return { text, diagnostic: { source, line: 0, column: 0, message: text, severity } };
}

export interface TemplateDiagnosis {
  /** Errors (which block publishing) and warnings, in the order the checks run. */
  diagnostics: TemplateDiagnostic[];
  /** Variables the content uses without declaring them, in order of first use. */
  suggestedVariables: string[];
}

function firstLine(err: unknown): string {
  return authorFacingLiquidMessage(errorMessage(err));
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
  if (!isPlainObject(partials)) {
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
      problems.push(
        `variable name ${JSON.stringify(name)} is not valid; use letters, digits, _ or -, starting with a letter or _`,
      );
      continue;
    }
    if (seen.has(name)) problems.push(`variable "${name}" is declared more than once`);
    seen.add(name);
    if (typeof d.required !== 'boolean') problems.push(`variable "${name}": required must be true or false`);
    if (d.required === true && d.default !== undefined) {
      problems.push(
        `variable "${name}" is required and has a default, which would never be used; make it optional or drop the default`,
      );
    }
    if (d.schema !== undefined && d.default !== undefined) {
      const mismatches = schemaCheck(() => variableValueProblems([d], { [name]: d.default }));
      if (mismatches.length > 0)
        problems.push(`variable "${name}": its default does not match its schema (${mismatches.join('; ')})`);
    }
  }
  return problems;
}

/** Time a schema check may take here (the api process): a pattern is the author's regular expression. */
const SCHEMA_CHECK_MS = 500;

/**
 * Runs a schema check with a time bound: a `pattern` that backtracks for ever (`(a+)+$`) must
 * not hold up the process that serves every workspace. (Renders check in the Liquid worker,
 * whose CPU time is bounded anyway.)
 */
function schemaCheck(check: () => string[]): string[] {
  try {
    return runInContext('check()', createContext({ check }), { timeout: SCHEMA_CHECK_MS }) as string[];
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT')
      return [`checking took longer than ${SCHEMA_CHECK_MS} ms; simplify the schema's patterns`];
    throw err;
  }
}

/**
 * Returns the problems that make a version unpublishable ([] when it is fine): Liquid syntax
 * errors (body, partials, header/footer templates), global variables used but not declared,
 * partials referenced but missing, invalid variable declarations and invalid PDF options.
 */
export function analyzeTemplate(content: TemplateVersionContent): string[] {
  return findings(content)
    .findings.filter((f) => f.diagnostic.severity === 'error')
    .map((f) => f.text);
}

/** The same checks as analyzeTemplate, placed (source, line, column), plus warnings and suggestions. */
export function diagnoseTemplate(content: TemplateVersionContent): TemplateDiagnosis {
  const result = findings(content);
  const diagnostics = result.findings.map((f) => f.diagnostic);
  // Sample data a preview would refuse, checked by the code every render uses. A warning:
  // sample data never blocks publishing.
  if (content.sampleData !== undefined && Array.isArray(content.variables)) {
    const warn = (message: string) =>
      diagnostics.push({
        source: 'sample_data',
        line: 0,
        column: 0,
        message: `sample data: ${message}`,
        severity: 'warning',
      });
    try {
      const values = resolveVariables(content.variables, content.sampleData);
      // The check a generation's variables get (typed variables), on the sample data.
      const typed = content.variables.filter((d) => d.schema !== undefined);
      const problems = typed.length === 0 ? [] : schemaCheck(() => variableValueProblems(typed, values));
      if (problems.length > 0) warn(`does not match the variables' schemas: ${problems.join('; ')}`);
    } catch (err) {
      warn((err as Error).message);
    }
  }
  return { diagnostics, suggestedVariables: result.undeclared };
}

/**
 * References to resources that cannot load, at their lines: in the body, partials, CSS and
 * header/footer templates. A header or footer's stylesheet or font is reported by the
 * header/footer rule instead (its words say why: it would crash the print).
 */
function resourceFindings(sources: Source[], content: TemplateVersionContent): Finding[] {
  const all: Source[] = [
    ...sources.filter((s) => s.source !== 'css' && s.source !== 'title'),
    { label: 'CSS', source: 'css', text: content.css },
    ...Object.entries(content.partials).map(([name, text]) => ({
      label: `partial ${JSON.stringify(name)}`,
      source: `partials/${name}` as const,
      text,
    })),
  ];
  const found: Finding[] = [];
  for (const source of all) {
    if (/header|footer/.test(source.source)) {
      const problem = headerFooterResourceProblem(source.text);
      if (problem) {
        found.push(unplaced(source.source, `${source.label} ${problem}`));
        continue;
      }
    }
    for (const ref of unloadableReferences(source.text)) {
      const message = describeReference(ref);
      found.push({
        text: `${source.label} (line ${ref.line}): ${message}`,
        diagnostic: { source: source.source, line: ref.line, column: ref.column, message, severity: 'error' },
      });
    }
  }
  return found;
}

function findings(content: TemplateVersionContent): { findings: Finding[]; undeclared: string[] } {
  const shape = checkShape(content);
  if (shape.length > 0) return { findings: shape.map((text) => unplaced('body', text)), undeclared: [] };
  const problems: Finding[] = [
    ...checkDeclarations(content).map((text) => unplaced('variables', text)),
    ...validatePdfOptions(content.pdfOptions).map((text) => unplaced('pdf_options', text)),
  ];

  const store = new PartialStore();
  const liquid = createLiquidEngine(store);

  let everythingAnalysed = true;
  // Parse every source on its own, so one broken partial does not hide the others' problems.
  const parsedPartials: Record<string, string> = {};
  for (const [name, text] of Object.entries(content.partials)) {
    try {
      liquid.parse(text, name);
      parsedPartials[name] = text;
    } catch (err) {
      problems.push({
        text: `partial ${JSON.stringify(name)}: ${firstLine(err)}`,
        diagnostic: liquidErrorDiagnostic(err, `partials/${name}`),
      });
      parsedPartials[name] = ''; // analysed as empty; its syntax error is reported above
      everythingAnalysed = false;
    }
  }

  const sources: Source[] = [{ label: 'template body', source: 'body', text: content.body }];
  const pdf = content.pdfOptions as Partial<typeof content.pdfOptions> | undefined;
  if (typeof pdf?.headerTemplate === 'string' && pdf.headerTemplate !== '')
    sources.push({ label: 'header template', source: 'header_template', text: pdf.headerTemplate });
  if (typeof pdf?.footerTemplate === 'string' && pdf.footerTemplate !== '')
    sources.push({ label: 'footer template', source: 'footer_template', text: pdf.footerTemplate });
  if (typeof pdf?.firstPageHeaderTemplate === 'string' && pdf.firstPageHeaderTemplate !== '') {
    sources.push({
      label: 'first-page header template',
      source: 'first_page_header_template',
      text: pdf.firstPageHeaderTemplate,
    });
  }
  if (typeof pdf?.firstPageFooterTemplate === 'string' && pdf.firstPageFooterTemplate !== '') {
    sources.push({
      label: 'first-page footer template',
      source: 'first_page_footer_template',
      text: pdf.firstPageFooterTemplate,
    });
  }
  // The CSS and the title are Liquid too (rendered with the same variables).
  if (/{[{%]/.test(content.css)) sources.push({ label: 'CSS', source: 'css', text: content.css });
  problems.push(...resourceFindings(sources, content));
  if (typeof content.title === 'string' && content.title !== '')
    sources.push({ label: 'title', source: 'title', text: content.title });

  const declared = new Set(content.variables.map((d) => d.name));
  const declaredNames = [...declared];
  const used = new Set<string>();
  const undeclared = new Map<string, { where: string; diagnostic: TemplateDiagnostic }>(); // name -> first use
  const missingPartials = new Map<string, Source>(); // name -> who references it

  // Analysis follows {% render %}/{% include %} into the partials; a missing one reads as empty
  // (and is recorded) so that everything else still gets checked.
  store.set(parsedPartials);
  store.lenient = true;
  for (const source of sources) {
    let templates: Template[];
    try {
      templates = liquid.parse(source.text);
    } catch (err) {
      problems.push({
        text: `${source.label}: ${firstLine(err)}`,
        diagnostic: liquidErrorDiagnostic(err, source.source),
      });
      everythingAnalysed = false;
      continue;
    }
    store.missing.clear();
    try {
      const analysis = liquid.analyzeSync(templates, { partials: true });
      for (const [name, uses] of Object.entries(analysis.globals)) {
        used.add(name);
        if (declared.has(name) || undeclared.has(name)) continue;
        const at = uses[0]?.location;
        const where = at?.file ? `partial ${JSON.stringify(at.file)}` : source.label;
        const position = at ? ` (line ${at.row}, column ${at.col})` : '';
        undeclared.set(name, {
          where: `${where}${position}`,
          diagnostic: {
            source: at?.file ? `partials/${at.file}` : source.source,
            line: at?.row ?? 0,
            column: at?.col ?? 0,
            message: `variable "${name}" is used but not declared (${declaredText(declaredNames)})`,
            severity: 'error',
          },
        });
      }
    } catch (err) {
      problems.push({
        text: `${source.label}: ${firstLine(err)}`,
        diagnostic: liquidErrorDiagnostic(err, source.source),
      });
      everythingAnalysed = false;
    }
    for (const name of store.missing) {
      if (!missingPartials.has(name)) missingPartials.set(name, source);
    }
  }

  for (const [name, source] of missingPartials) {
    problems.push(
      unplaced(
        source.source,
        `${source.label} references partial ${JSON.stringify(name)}, which this version does not define`,
      ),
    );
  }
  for (const [name, { where, diagnostic }] of undeclared) {
    problems.push({
      text: `variable "${name}" is used in ${where} but not declared (${declaredText(declaredNames)})`,
      diagnostic,
    });
  }
  // Only when every source could be analysed: a parse error hides what the rest uses.
  if (everythingAnalysed) {
    for (const name of declaredNames) {
      if (!used.has(name))
        problems.push(unplaced('variables', `variable "${name}" is declared but not used`, 'warning'));
    }
  }
  return { findings: problems, undeclared: [...undeclared.keys()] };
}
