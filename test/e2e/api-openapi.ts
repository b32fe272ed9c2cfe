// Checks real HTTP answers against docs/openapi.yaml: the response declared for the
// operation and status (or the spec's path-independent NotFound / MethodNotAllowed), its
// required headers (values coerced to the header schema's type) and its JSON body.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { IncomingHttpHeaders } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import { parseRfc3339 } from '../../gateway/rest-gateway.ts';

const SPEC_PATH = fileURLToPath(new URL('../../docs/openapi.yaml', import.meta.url));
const SPEC_ID = 'https://docgen.invalid/openapi.yaml';

type Json = Record<string, any>;

export interface OpenApi {
  spec: Json;
  /** Throws with a readable message when the answer does not match the spec. */
  check(answer: { method: string; path: string; status: number; headers: IncomingHttpHeaders; body: unknown }): void;
}

function addFormats(ajv: Ajv2020): void {
  ajv.addFormat('date-time', { type: 'string', validate: (value: string) => parseRfc3339(value) !== undefined });
  ajv.addFormat('uri', {
    type: 'string',
    validate: (value: string) => {
      try {
        return /^[a-z][a-z0-9+.-]*:/i.test(value) && new URL(value).href.length > 0;
      } catch {
        return false;
      }
    },
  });
}

export function loadOpenApi(): OpenApi {
  const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as Json;
  const bodies = new Ajv2020({ strict: false, allErrors: true });
  const headers = new Ajv2020({ strict: false, allErrors: true, coerceTypes: true });
  for (const ajv of [bodies, headers]) {
    addFormats(ajv);
    ajv.addSchema({ $id: SPEC_ID, components: spec.components });
  }
  const compiled = new Map<string, ValidateFunction>();
  const validator = (ajv: Ajv2020, schema: Json, key: string): ValidateFunction => {
    let fn = compiled.get(key);
    if (!fn) {
      // Refs inside the spec are "#/components/…": resolve them against the spec document.
      fn = schema.$ref
        ? ajv.getSchema(`${SPEC_ID}${schema.$ref}`)!
        : ajv.compile({ ...schema, $id: `${SPEC_ID}/${encodeURIComponent(key)}` });
      compiled.set(key, fn);
    }
    return fn;
  };
  const deref = (node: Json): Json => {
    let current = node;
    while (current.$ref) {
      const path = (current.$ref as string).replace(/^#\//, '').split('/');
      current = path.reduce<Json>((acc, part) => acc[part.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
    }
    return current;
  };

  const findResponse = (method: string, path: string, status: number): { response: Json; where: string } => {
    const pathname = path.split('?')[0]!;
    for (const [template, item] of Object.entries(spec.paths as Json)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (!pattern.test(pathname)) continue;
      const operation = (item as Json)[method.toLowerCase()];
      if (!operation) {
        if (status !== 405)
          throw new Error(`${method} ${template} has no operation, so only 405 is documented; got ${status}`);
        return {
          response: deref(spec.components.responses.MethodNotAllowed),
          where: 'components.responses.MethodNotAllowed',
        };
      }
      const response = operation.responses[String(status)];
      if (!response) throw new Error(`${method} ${template}: status ${status} is not documented`);
      return { response: deref(response), where: `${method} ${template} ${status}` };
    }
    if (status !== 404)
      throw new Error(`${method} ${pathname} matches no documented path, so only 404 is documented; got ${status}`);
    return { response: deref(spec.components.responses.NotFound), where: 'components.responses.NotFound' };
  };

  return {
    spec,
    check({ method, path, status, headers: got, body }) {
      const { response, where } = findResponse(method, path, status);
      const problems: string[] = [];
      for (const [name, ref] of Object.entries((response.headers ?? {}) as Json)) {
        const header = deref(ref as Json);
        const value = got[name.toLowerCase()];
        if (value === undefined) {
          if (header.required) problems.push(`header ${name} is missing`);
          continue;
        }
        // Header values are text: validate inside a wrapper object so that coercion to the
        // schema's type (integer, say) can replace the value.
        const holder = { v: Array.isArray(value) ? value[0] : value };
        const fn = validator(headers, { type: 'object', properties: { v: header.schema } }, `header:${name}`);
        if (!fn(holder)) problems.push(`header ${name}=${JSON.stringify(value)}: ${headers.errorsText(fn.errors)}`);
      }
      const media = response.content?.['application/json'];
      if (media) {
        const contentType = String(got['content-type'] ?? '');
        if (!/^application\/json\b/.test(contentType))
          problems.push(`Content-Type is ${JSON.stringify(contentType)}, not application/json`);
        if (method !== 'HEAD') {
          const fn = validator(bodies, media.schema, `body:${where}`);
          if (!fn(body)) problems.push(`body ${JSON.stringify(body)?.slice(0, 500)}: ${bodies.errorsText(fn.errors)}`);
        }
      }
      if (problems.length > 0)
        throw new Error(
          `answer to ${method} ${path} (${status}) does not match docs/openapi.yaml (${where}):\n  ${problems.join('\n  ')}`,
        );
    },
  };
}
