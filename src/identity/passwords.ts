// Password hashing (scrypt with a per-user random salt, from node:crypto) and the rules a new
// password must meet. The stored form names its parameters, so they can be raised later
// without breaking existing hashes: a sign-in that verifies an older hash stores a new one
// with today's parameters (needsRehash). Today: N = 2^17, r = 8, p = 1 (OWASP's scrypt
// minimum), which takes 128 MiB for a fraction of a second; at most
// MAX_CONCURRENT_DERIVATIONS run at once, so a burst of sign-ins queues instead of growing
// memory without bound.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { validationError } from '../domain/errors.ts';
import { COMMON_PASSWORDS } from './common-passwords.ts';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

const PARAMS = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;
/** Largest N a stored hash may name (a corrupt or hostile value must not allocate gigabytes). */
const MAX_LOG2_N = 20;
/** scrypt derivations running at once in this process (each holds 128 * N * r bytes). */
export const MAX_CONCURRENT_DERIVATIONS = 2;

let running = 0;
const waiting: Array<() => void> = [];

async function withDerivationSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT_DERIVATIONS) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await work();
  } finally {
    // Hand the slot straight to the next waiter, or give it back.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function derive(password: string, salt: Buffer, options: ScryptOptions, length: number): Promise<Buffer> {
  return withDerivationSlot(
    () =>
      new Promise((resolve, reject) => {
        // maxmem: scrypt needs 128 * N * r bytes, above the default 32 MiB.
        scrypt(
          password.normalize('NFKC'),
          salt,
          length,
          { ...options, maxmem: 256 * (options.N ?? 0) * (options.r ?? 8) },
          (err, key) => (err ? reject(err) : resolve(key)),
        );
      }),
  );
}

/** `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>`. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS, KEY_LENGTH);
  return ['scrypt', Math.log2(PARAMS.N), PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, logN, r, p, saltText, hashText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !hashText) return false;
  if (!(Number(logN) >= 1 && Number(logN) <= MAX_LOG2_N) || Number(r) > 32 || Number(p) > 16) return false;
  const expected = Buffer.from(hashText, 'base64');
  const key = await derive(
    password,
    Buffer.from(saltText, 'base64'),
    { N: 2 ** Number(logN), r: Number(r), p: Number(p) },
    expected.length,
  );
  return timingSafeEqual(key, expected);
}

/** True when a stored hash was made with other (older) parameters than today's. */
export function needsRehash(stored: string): boolean {
  const [scheme, logN, r, p] = stored.split('$');
  return (
    scheme !== 'scrypt' || Number(logN) !== Math.log2(PARAMS.N) || Number(r) !== PARAMS.r || Number(p) !== PARAMS.p
  );
}

let dummyHash: Promise<string> | undefined;
/**
 * Spends the time of one verification against a hash nobody knows the password of, so an
 * unknown email or a user without a password answers as slowly as a wrong password.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword(randomBytes(24).toString('base64'));
  await verifyPassword(password, await dummyHash);
  return false;
}

/** Refuses (VALIDATION_ERROR on `password`) a password that is too short, too long or common. */
export function checkNewPassword(password: unknown, email: string): string {
  const value = typeof password === 'string' ? password : '';
  const issue = passwordIssue(value, email);
  if (issue) throw validationError([{ field: 'password', issue }]);
  return value;
}

function passwordIssue(password: string, email: string): string | undefined {
  if ([...password].length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  const folded = password.toLowerCase();
  const local = email.split('@')[0] ?? '';
  if (
    COMMON_PASSWORDS.has(folded) ||
    new Set(folded).size <= 2 ||
    folded.includes(email) ||
    (local.length >= 3 && folded.replace(local, '').length < 8) ||
    isRun(folded)
  ) {
    return 'is too easy to guess (a common password, a repetition or a sequence, or little more than your email); choose another';
  }
  return undefined;
}

/** "123456789012", "abcdefghijkl" and their reverses. */
function isRun(value: string): boolean {
  let up = true;
  let down = true;
  for (let i = 1; i < value.length; i++) {
    const step = value.charCodeAt(i) - value.charCodeAt(i - 1);
    if (step !== 1 && !(value[i] === '0' && value[i - 1] === '9')) up = false;
    if (step !== -1) down = false;
  }
  return up || down;
}
