// Entry of a Liquid worker process (see liquid-renderer.ts for why a process, not a thread):
// renders one template at a time, synchronously. The parent kills this process on its hard
// time-out and V8 aborts it at its heap limit, so nothing here has to be cooperative;
// liquidjs's limits only turn the common cases into clean error messages.

import { createLiquidEngine, PartialStore } from './liquid-engine.ts';
import type { Liquid, Template } from 'liquidjs';
import { buildHtmlDocument } from './html-document.ts';
import type { LiquidRequest, LiquidResponse, LiquidWorkerData } from './liquid-protocol.ts';
import type { DiagnosticSource, TemplateDiagnostic } from '../../domain/template-diagnostics.ts';
import { liquidErrorDiagnostic } from './liquid-diagnostic.ts';
import { authorFacingLiquidMessage } from './liquid-error-text.ts';
import { DEFAULT_LOCALE, DEFAULT_TIME_ZONE } from '../../domain/locale-settings.ts';
import { variableProblemsMessage, variableValueProblems } from '../../domain/variable-schema.ts';
import type { FormatSettings } from './filters/authoring-filters.ts';

/** A failed part: the message clients see, and where it happened (for previews). */
class PartError extends Error {
  readonly diagnostic: TemplateDiagnostic;
  constructor(message: string, diagnostic: TemplateDiagnostic) {
    super(message);
    this.diagnostic = diagnostic;
  }
}

const { limits } = JSON.parse(process.argv[2] ?? '{}') as LiquidWorkerData;
const store = new PartialStore();
const assets = new Set<string>();
const onAsset = (name: string) => assets.add(name);
// The version's locale and time zone: set before each render, read by the formatting filters.
const settings: FormatSettings = { locale: DEFAULT_LOCALE, timeZone: DEFAULT_TIME_ZONE };
const liquid = createLiquidEngine(store, { limits, onAsset, settings });
// The CSS escapes values for CSS strings; the title stays plain text (escaped when placed).
const cssLiquid = createLiquidEngine(store, { limits, onAsset, settings, output: 'css' });
const textLiquid = createLiquidEngine(store, { limits, onAsset, settings, output: 'text' });

function send(response: LiquidResponse): void {
  process.send!(response);
}

function describe(where: string, err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // liquidjs wraps errors of its own code (a RangeError included) into its RenderError.
  if (/maximum call stack size exceeded/i.test(message)) {
    return `Liquid error in ${where}: template nesting too deep`;
  }
  // liquidjs messages name the problem and its position ("undefined filter: x, line:1, col:5").
  return `Liquid error in ${where}: ${authorFacingLiquidMessage(message)}`;
}

function renderPart(
  where: string,
  part: DiagnosticSource,
  source: string,
  request: LiquidRequest,
  engine: Liquid = liquid,
): string {
  let templates: Template[];
  try {
    templates = engine.parse(source);
  } catch (err) {
    throw new PartError(describe(where, err), liquidErrorDiagnostic(err, part));
  }
  try {
    // Variables are the scope and also globals, so partials pulled in with {% render %} see them
    // too (publish-time analysis counts variables used in partials as template globals).
    return String(
      engine.renderSync(templates, request.variables, {
        globals: request.variables,
        renderLimit: request.renderLimitMs,
        memoryLimit: limits.memoryLimit,
      }),
    );
  } catch (err) {
    throw new PartError(describe(where, err), liquidErrorDiagnostic(err, part));
  }
}

process.on('message', (request: LiquidRequest) => {
  let response: LiquidResponse;
  // Typed variables are checked here, not in the render process: a schema's pattern is the
  // author's regular expression, and this process is the one whose CPU time is bounded.
  const problems = variableValueProblems(request.typed, request.variables);
  if (problems.length > 0) {
    send({ type: 'error', id: request.id, message: variableProblemsMessage(problems), reason: 'variables' });
    return;
  }
  settings.locale = request.locale;
  settings.timeZone = request.timeZone;
  try {
    store.set(request.partials);
    assets.clear();
    const part = (where: string, at: DiagnosticSource, source: string) =>
      source === '' ? '' : renderPart(where, at, source, request);
    const body = renderPart('template body', 'body', request.body, request);
    // Most CSS has no Liquid in it: skip the parse.
    const css = /{[{%]/.test(request.css) ? renderPart('CSS', 'css', request.css, request, cssLiquid) : request.css;
    const title =
      request.title === ''
        ? request.defaultTitle
        : renderPart('title', 'title', request.title, request, textLiquid).trim();
    const result = {
      html: buildHtmlDocument(body, css, { title, language: request.language }),
      css,
      headerTemplate: part('header template', 'header_template', request.headerTemplate),
      footerTemplate: part('footer template', 'footer_template', request.footerTemplate),
      firstPageHeaderTemplate: part(
        'first-page header template',
        'first_page_header_template',
        request.firstPageHeaderTemplate,
      ),
      firstPageFooterTemplate: part(
        'first-page footer template',
        'first_page_footer_template',
        request.firstPageFooterTemplate,
      ),
      title,
      assets: [...assets],
    };
    response = { type: 'result', id: request.id, result };
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const reason = message.includes('template render limit exceeded') ? 'time' : 'error';
    response = { type: 'error', id: request.id, message, reason };
    if (err instanceof PartError) response.diagnostic = err.diagnostic;
  }
  send(response);
});

// The parent is gone (exited or killed): so is the reason to live.
process.on('disconnect', () => process.exit(0));

send({ type: 'ready' });
