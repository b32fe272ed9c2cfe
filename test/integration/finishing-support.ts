// Independent readers for the finishing tests: qpdf's JSON (objects resolved by reference, stream
// data inline), pdfinfo, pdffonts, pdfdetach, pdfsig and openssl, on PDFs written to a run
// directory. Nothing here parses a PDF itself.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class PdfFiles {
  #n = 0;
  readonly dir: string;
  constructor(dir: string) {
    this.dir = dir;
  }

  async save(pdf: Uint8Array, name = 'doc'): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, `${name}-${++this.#n}-${process.pid}.pdf`);
    await writeFile(path, pdf);
    return path;
  }
}

export async function tool(cmd: string, args: string[], options: { cwd?: string } = {}): Promise<string> {
  return (await run(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...options })).stdout;
}

/** The signatures' CMS blobs (pdfsig -dump writes <file>.sig<n> into its working directory). */
export async function dumpSignatures(path: string): Promise<string> {
  await tool('pdfsig', ['-nocert', '-dump', path], { cwd: dirname(path) });
  return `${path}.sig0`;
}

/** The error output of a tool that is expected to fail. */
export async function toolError(cmd: string, args: string[]): Promise<string> {
  try {
    await run(cmd, args, { encoding: 'utf8' });
    return '';
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A PDF as qpdf --json (v2) shows it. */
type QpdfObjects = Record<string, { value?: Json; stream?: { dict: Json; data?: string } }>;

export class QpdfView {
  readonly #objects: QpdfObjects;
  constructor(objects: QpdfObjects) {
    this.#objects = objects;
  }

  static async of(path: string): Promise<QpdfView> {
    const out = JSON.parse(
      await tool('qpdf', [
        '--json',
        '--json-key=qpdf',
        '--json-stream-data=inline',
        '--decode-level=generalized',
        path,
      ]),
    ) as { qpdf: [unknown, Record<string, { value?: Json; stream?: { dict: Json; data?: string } }>] };
    return new QpdfView(out.qpdf[1]);
  }

  get trailer(): Record<string, Json> {
    return this.#objects.trailer!.value as Record<string, Json>;
  }

  /** The object a reference ("12 0 R") names, or the value itself; streams give their dictionary. */
  resolve(value: Json | undefined): Json | undefined {
    if (typeof value === 'string' && /^\d+ \d+ R$/.test(value)) {
      const o = this.#objects[`obj:${value}`];
      return o?.value ?? o?.stream?.dict;
    }
    return value;
  }

  dict(value: Json | undefined): Record<string, Json> {
    const d = this.resolve(value);
    if (d === null || typeof d !== 'object' || Array.isArray(d))
      throw new Error(`not a dictionary: ${JSON.stringify(value)}`);
    return d;
  }

  get catalog(): Record<string, Json> {
    return this.dict(this.trailer['/Root']);
  }

  /** A stream's decoded data. */
  streamData(ref: Json | undefined): Buffer {
    const o = typeof ref === 'string' ? this.#objects[`obj:${ref}`] : undefined;
    if (!o?.stream?.data) throw new Error(`not a stream with data: ${JSON.stringify(ref)}`);
    return Buffer.from(o.stream.data, 'base64');
  }

  streamDict(ref: Json | undefined): Record<string, Json> {
    const o = typeof ref === 'string' ? this.#objects[`obj:${ref}`] : undefined;
    if (!o?.stream) throw new Error(`not a stream: ${JSON.stringify(ref)}`);
    return o.stream.dict as Record<string, Json>;
  }

  /** Every dictionary, indirect or nested in another object (stream dictionaries included). */
  all(): Array<Record<string, Json>> {
    const out: Array<Record<string, Json>> = [];
    const walk = (v: Json | undefined): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === 'object') {
        out.push(v);
        Object.values(v).forEach(walk);
      }
    };
    for (const [key, o] of Object.entries(this.#objects)) if (key.startsWith('obj:')) walk(o.value ?? o.stream?.dict);
    return out;
  }
}

/** qpdf's text form of a string ("u:…", "b:…"). */
export const qpdfText = (v: Json | undefined) => (typeof v === 'string' ? v.replace(/^[ub]:/, '') : undefined);

export interface FontRow {
  name: string;
  type: string;
  embedded: boolean;
  unicode: boolean;
}

export async function pdfFonts(path: string): Promise<FontRow[]> {
  const lines = (await tool('pdffonts', [path]))
    .split('\n')
    .slice(2)
    .filter((l) => l.trim() !== '');
  return lines.map((line) => {
    const cells = line.trim().split(/\s+/);
    const [emb, , uni] = cells.slice(-5);
    return { name: cells[0]!, type: line.slice(37, 55).trim(), embedded: emb === 'yes', unicode: uni === 'yes' };
  });
}

export async function pdfInfoFields(path: string): Promise<Record<string, string>> {
  const out = await tool('pdfinfo', ['-isodates', path]);
  return Object.fromEntries(
    out
      .split('\n')
      .map((l) => /^([^:]+):\s*(.*)$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!.trim()]),
  );
}

/** The attachments pdfdetach saves, by name. */
export async function detach(path: string, dir: string): Promise<Map<string, Buffer>> {
  const list = await tool('pdfdetach', ['-list', path]);
  const names = list
    .split('\n')
    .slice(1)
    .map((l) => /^\d+: (.*)$/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined);
  const out = new Map<string, Buffer>();
  await mkdir(dir, { recursive: true });
  for (const [i, name] of names.entries()) {
    const file = join(dir, `att-${process.pid}-${i}`);
    await tool('pdfdetach', ['-save', String(i + 1), '-o', file, path]);
    out.set(name, await readFile(file));
  }
  return out;
}
