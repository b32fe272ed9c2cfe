// Templates the waiting and SDK tests render: stored and published straight through the
// repository of a running app (publish checks are the admin plane's job, tested there).
import { DEFAULT_PDF_OPTIONS } from '../../src/domain/document-settings.ts';
import type { TemplateVersionContent } from '../../src/domain/template.ts';
import { formatId, parseId } from '../../src/domain/ids.ts';
import type { App } from '../../src/app/build-app.ts';
import { ENDLESS_LIQUID_LOOP } from '../harness/liquid-loops.ts';

/** `<h1>Hello {{ name }}</h1>`: renders in well under a second. */
export const GREETING: Partial<TemplateVersionContent> = {
  body: '<h1>Hello {{ name }}</h1>',
  variables: [{ name: 'name', required: false, description: '' }],
};

/**
 * Liquid that loops until the Liquid time-out (DOCGEN_LIQUID_TIMEOUT_MS) stops it: the
 * generation stays PROCESSING that long, then FAILS, on however fast a machine.
 */
export const SLOW: Partial<TemplateVersionContent> = {
  body: `${ENDLESS_LIQUID_LOOP}<p>never printed</p>`,
};

export async function storeTemplate(
  app: App,
  workspaceId: string,
  content: Partial<TemplateVersionContent>,
  name = `t-${Math.random().toString(36).slice(2, 8)}`,
): Promise<string> {
  const { templates } = app.infrastructure.repositories;
  const { template } = await templates.create(parseId('workspace', workspaceId)!, name, {
    body: '',
    css: '',
    partials: {},
    variables: [],
    pdfOptions: DEFAULT_PDF_OPTIONS,
    ...content,
  });
  await templates.publish(template._id, 1);
  return formatId('template', template._id);
}
