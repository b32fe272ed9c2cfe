// The starter gallery (docs/templates.md#the-starter-gallery): ready-made templates an author
// starts from, each with its CSS, typed variables and sample data, so that it previews at once.
// One home for all of it: the admin API lists it (ListGalleryTemplates) and creates templates
// from it (CreateTemplate from_gallery, `docgen admin template create --from-gallery NAME`), and
// `docgen dev` seeds its invoice (also the benchmarks' and tests' sample invoice).
//
// Each template is a folder here: body.liquid, style.css, variables.json, sample-data.json,
// settings.json (title, description, the document title, PDF options, metadata, locale, time
// zone) and optionally partials.json.

import { readFileSync } from 'node:fs';
import {
  DEFAULT_PDF_OPTIONS,
  EMPTY_METADATA,
  type DocumentMetadata,
  type PdfOptions,
} from '../domain/document-settings.ts';
import type { JsonObject, TemplateVersionContent, VariableDeclaration } from '../domain/template.ts';

/** The names, in the order the gallery shows them. */
export const GALLERY_NAMES = ['invoice', 'receipt', 'letter', 'certificate', 'shipping-label', 'report'] as const;
export type GalleryName = (typeof GALLERY_NAMES)[number];

export interface GalleryTemplate {
  name: GalleryName;
  /** e.g. "Shipping label". */
  title: string;
  /** What it is and which features it shows. */
  description: string;
  /** Everything a new template starts with, sample data included. */
  content: TemplateVersionContent;
}

interface GallerySettings {
  title: string;
  description: string;
  /** The version's title (Liquid). */
  documentTitle: string;
  pdfOptions?: Partial<PdfOptions>;
  metadata?: Partial<DocumentMetadata>;
  locale?: string;
  timeZone?: string;
}

function read(name: GalleryName, file: string): string {
  return readFileSync(new URL(`./${name}/${file}`, import.meta.url), 'utf8');
}

function readJson<T>(name: GalleryName, file: string): T {
  return JSON.parse(read(name, file)) as T;
}

function load(name: GalleryName): GalleryTemplate {
  const settings = readJson<GallerySettings>(name, 'settings.json');
  let partials: Record<string, string> = {};
  try {
    partials = readJson<Record<string, string>>(name, 'partials.json');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const content: TemplateVersionContent = {
    body: read(name, 'body.liquid'),
    css: read(name, 'style.css'),
    partials,
    variables: readJson<VariableDeclaration[]>(name, 'variables.json').map((v) => ({
      ...v,
      description: v.description ?? '',
    })),
    pdfOptions: { ...DEFAULT_PDF_OPTIONS, ...settings.pdfOptions },
    title: settings.documentTitle,
    metadata: { ...EMPTY_METADATA, ...settings.metadata },
    sampleData: readJson<JsonObject>(name, 'sample-data.json'),
  };
  if (settings.locale) content.locale = settings.locale;
  if (settings.timeZone) content.timeZone = settings.timeZone;
  return { name, title: settings.title, description: settings.description, content };
}

/** Every gallery template, read afresh (callers may change what they get). */
export function listGallery(): GalleryTemplate[] {
  return GALLERY_NAMES.map(load);
}

export function isGalleryName(name: string): name is GalleryName {
  return (GALLERY_NAMES as readonly string[]).includes(name);
}

/** One gallery template by name; undefined for a name the gallery does not have. */
export function galleryTemplate(name: string): GalleryTemplate | undefined {
  return isGalleryName(name) ? load(name) : undefined;
}
