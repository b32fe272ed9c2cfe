// Reading `Prefer: wait=N` (RFC 7240 syntax), the same for REST and RPC.
import { describe, expect, it } from 'vitest';
import { MAX_WAIT_SECONDS, parsePreferWait, preferenceApplied } from '../../src/api/prefer-wait.ts';
import { DomainError } from '../../src/domain/errors.ts';

function refusal(header: string): DomainError {
  try {
    parsePreferWait(header);
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
  throw new Error(`${JSON.stringify(header)} was accepted`);
}

describe('Prefer: wait', () => {
  it('reads the seconds of a wait preference', () => {
    expect(parsePreferWait('wait=10')).toBe(10);
    expect(parsePreferWait('WAIT = 5')).toBe(5);
    expect(parsePreferWait('wait="7"')).toBe(7);
    expect(parsePreferWait('respond-async, wait=3')).toBe(3);
    expect(parsePreferWait('return=minimal; foo="a,b", wait=4;x=1')).toBe(4);
    expect(parsePreferWait(['respond-async', 'wait=2'])).toBe(2);
  });

  it('is absent without a wait preference, or for wait=0', () => {
    expect(parsePreferWait(undefined)).toBeUndefined();
    expect(parsePreferWait(null)).toBeUndefined();
    expect(parsePreferWait('')).toBeUndefined();
    expect(parsePreferWait('respond-async, return=representation')).toBeUndefined();
    expect(parsePreferWait('waiting=3')).toBeUndefined();
    expect(parsePreferWait('wait=0')).toBeUndefined();
  });

  it(`lowers waits over ${MAX_WAIT_SECONDS} s to ${MAX_WAIT_SECONDS}, however many digits`, () => {
    expect(parsePreferWait('wait=31')).toBe(30);
    expect(parsePreferWait('wait=3600')).toBe(30);
    expect(parsePreferWait(`wait=${'9'.repeat(40)}`)).toBe(30);
  });

  it('takes the first of repeated wait preferences (RFC 7240 §2)', () => {
    expect(parsePreferWait('wait=2, wait=20')).toBe(2);
    expect(parsePreferWait(['wait=3', 'wait=bad'])).toBe(3);
  });

  it('refuses a wait that is not whole seconds, naming the header', () => {
    for (const header of ['wait', 'wait=', 'wait=-1', 'wait=1.5', 'wait=soon', 'wait=1e3', 'wait="2 s"']) {
      const err = refusal(header);
      expect(err.code, header).toBe('VALIDATION_ERROR');
      expect(err.details).toEqual([{ field: 'Prefer', issue: 'wait must be a whole number of seconds, 0 to 30' }]);
    }
  });

  it('says what was applied', () => {
    expect(preferenceApplied(10)).toBe('wait=10');
  });
});
