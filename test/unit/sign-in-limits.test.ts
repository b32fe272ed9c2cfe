// The sign-in limits as a person meets them (src/identity/sign-in-limiter.ts), with small
// limits so the global cap is reached quickly: a guesser at one address is stopped there; the
// email's global cap turns wrong passwords into RATE_LIMITED, yet the right password still
// signs in, from any address.
import { randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS } from '../../src/store/documents.ts';
import { isDomainError } from '../../src/domain/errors.ts';
import { createIdentity, createIdentityRepositories, type Identity } from '../../src/identity/identity.ts';
import { PageTokens } from '../../src/store/pagination.ts';
import { startInProcessStack, type InProcessStack } from '../harness/in-process.ts';
import { testSecretKey } from '../harness/test-config.ts';

let stack: InProcessStack;
let identity: Identity;
const EMAIL = 'limited@example.com';
const PASSWORD = 'the right passphrase, long';

async function outcome(email: string, password: string, address: string): Promise<string> {
  try {
    await identity.sessions.signIn(email, password, address);
    return 'signed in';
  } catch (err) {
    if (isDomainError(err)) return err.code;
    throw err;
  }
}

beforeAll(async () => {
  stack = await startInProcessStack();
  identity = createIdentity({
    repositories: createIdentityRepositories(stack.db),
    workspaces: stack.repositories.workspaces,
    rateLimits: stack.repositories.rateLimits,
    portalBaseUrl: () => 'http://127.0.0.1:8081',
    pageTokens: new PageTokens(testSecretKey()),
    signInLimits: { attempts: 3, windowSeconds: 3600, emailAttempts: 5, emailWindowSeconds: 3600 },
  });
  const workspace = await stack.workspace('limits');
  const { invitation } = await identity.people.invite({
    workspaceId: `ws_${workspace.toHexString()}`,
    email: EMAIL,
    role: 'owner',
  });
  await identity.sessions.acceptInvitation(invitation.url.split('/invite/')[1], PASSWORD, '');
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe('sign-in limits', () => {
  it('limit a guesser per email and address, and let the right password through the global cap', async () => {
    // One address: 3 failures, then refused before the password is checked.
    const fromOne = [];
    for (let i = 0; i < 5; i++) fromOne.push(await outcome(EMAIL, 'wrong guess number one', '10.0.0.1'));
    expect(fromOne).toEqual(['UNAUTHORIZED', 'UNAUTHORIZED', 'UNAUTHORIZED', 'RATE_LIMITED', 'RATE_LIMITED']);
    // The right password from another address is not blocked by them.
    expect(await outcome(EMAIL, PASSWORD, '10.0.0.2')).toBe('signed in');
    // Two more failures elsewhere spend the email's global cap (5); after that, wrong passwords
    // from any fresh address answer RATE_LIMITED…
    expect(await outcome(EMAIL, 'wrong guess number two', '10.0.0.3')).toBe('UNAUTHORIZED');
    expect(await outcome(EMAIL, 'wrong guess number two', '10.0.0.4')).toBe('UNAUTHORIZED');
    expect(await outcome(EMAIL, 'wrong guess number three', '10.0.0.5')).toBe('RATE_LIMITED');
    // …and the right password still signs in, from a new address and from the guesser's own
    // neighbour alike.
    expect(await outcome(EMAIL, PASSWORD, '10.0.0.6')).toBe('signed in');
    expect(await outcome(EMAIL, PASSWORD, '10.0.0.5')).toBe('signed in');
    // Another email is not affected by this one's cap.
    expect(await outcome('someone.else@example.com', 'wrong guess number four', '10.0.0.7')).toBe('UNAUTHORIZED');
  }, 60_000);
});

describe('password hashes made with older parameters', () => {
  it('are replaced by N = 2^17 at the next successful sign-in, and only then', async () => {
    const email = 'old.hash@example.com';
    const password = 'an old but good passphrase';
    const workspace = await stack.workspace('rehash');
    await identity.people.invite({ workspaceId: `ws_${workspace.toHexString()}`, email, role: 'viewer' });
    // A hash as docgen 0.1 stored it (N = 2^15), made here with node:crypto directly.
    const salt = randomBytes(16);
    const key = scryptSync(password, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const old = ['scrypt', 15, 8, 1, salt.toString('base64'), key.toString('base64')].join('$');
    const users = stack.db.collection(COLLECTIONS.users);
    await users.updateOne({ email }, { $set: { passwordHash: old } });
    const stored = async () => ((await users.findOne({ email })) as { passwordHash: string } | null)?.passwordHash;

    expect(await outcome(email, 'not the passphrase at all', '10.1.0.1')).toBe('UNAUTHORIZED');
    expect(await stored()).toBe(old);
    expect(await outcome(email, password, '10.1.0.1')).toBe('signed in');
    const upgraded = await stored();
    expect(upgraded).toMatch(/^scrypt\$17\$8\$1\$/);
    // The new hash is of the same password (checked with node:crypto, not docgen's verifier).
    const [, , , , newSalt, newKey] = upgraded!.split('$');
    expect(
      scryptSync(password, Buffer.from(newSalt!, 'base64'), 32, {
        N: 2 ** 17,
        r: 8,
        p: 1,
        maxmem: 256 * 1024 * 1024,
      }).toString('base64'),
    ).toBe(newKey);
    expect(await outcome(email, password, '10.1.0.1')).toBe('signed in');
    expect(await stored()).toBe(upgraded);
  }, 120_000);
});
