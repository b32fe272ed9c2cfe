import { randomUUID } from 'node:crypto';

const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

/** The caller's X-Request-Id when it is printable ASCII of at most 200 characters, else a new one. */
export function requestIdFrom(given: string | string[] | null | undefined): string {
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}
