/** True for MongoDB's duplicate-key error (E11000), on any server that speaks the protocol. */
export function isDuplicateKey(err: unknown): boolean {
  const e = err as { code?: number; message?: string } | null;
  return !!e && (e.code === 11000 || e.code === 11001 || /E11000|duplicate key/i.test(e.message ?? ''));
}
