// The TypeScript SDK's reading of Retry-After (sdk/typescript/src/http.ts): docgen sends whole
// seconds; proxies and load balancers in front of it may send an HTTP date.
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../sdk/typescript/src/http.ts';

describe('SDK Retry-After', () => {
  it('reads whole seconds', () => {
    expect(parseRetryAfter('1')).toBe(1_000);
    expect(parseRetryAfter(' 30 ')).toBe(30_000);
  });

  it('reads an HTTP date as the time left until it (never negative)', () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    expect(parseRetryAfter(inTenSeconds)).toBeGreaterThan(8_000);
    expect(parseRetryAfter(inTenSeconds)).toBeLessThanOrEqual(10_000);
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT')).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('')).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-1')).toBeUndefined();
  });
});
