// Public identifiers are a type prefix plus the row's MongoDB ObjectId in hex: URL-safe,
// and sortable by creation time because an ObjectId starts with its creation second.
import { createHash } from 'node:crypto';
import { ObjectId } from 'mongodb';

export const ID_PREFIXES = {
  generation: 'gen_',
  workspace: 'ws_',
  template: 'tpl_',
  apiKey: 'key_',
  webhookEndpoint: 'whe_',
  event: 'evt_',
  delivery: 'dlv_',
  asset: 'ast_',
  certificate: 'crt_',
  user: 'usr_',
  auditEvent: 'aud_',
  batch: 'bat_',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function formatId(kind: IdKind, id: ObjectId): string {
  return ID_PREFIXES[kind] + id.toHexString();
}

/** Parses a public id of the given kind; undefined when it is not one (wrong prefix, bad hex). */
export function parseId(kind: IdKind, value: string): ObjectId | undefined {
  const prefix = ID_PREFIXES[kind];
  if (typeof value !== 'string' || !value.startsWith(prefix)) return undefined;
  const hex = value.slice(prefix.length);
  if (!/^[0-9a-f]{24}$/.test(hex)) return undefined;
  return new ObjectId(hex);
}

/**
 * An ObjectId derived from a name: the same parts always give the same id. Used where an
 * insert must be idempotent (one delivery per event and endpoint, one idempotency record per
 * key) without relying on unique secondary indexes: `_id` is unique on every MongoDB.
 */
export function deterministicObjectId(...parts: string[]): ObjectId {
  return new ObjectId(digestOf(parts).subarray(0, 12));
}

/**
 * Like deterministicObjectId, but its first 4 bytes are the given time (Unix seconds), as in
 * every ObjectId: ids made this way sort by that time, so a list ordered by `_id` is ordered by
 * it (newest first) and inserts land at the end of the `_id` index. The other 8 bytes come from
 * the name, so the same parts and time always give the same id.
 */
export function timeOrderedObjectId(unixSeconds: number, ...parts: string[]): ObjectId {
  const bytes = Buffer.alloc(12);
  bytes.writeUInt32BE(Math.max(0, Math.min(0xffffffff, Math.floor(unixSeconds))), 0);
  digestOf(parts).copy(bytes, 4, 0, 8);
  return new ObjectId(bytes);
}

function digestOf(parts: string[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

/**
 * The id of item `index` (0 to 65535) of a batch: the batch's creation second, 6 bytes of the
 * batch id's digest, then the index. The same batch and index always give the same id (a
 * retried create writes each item once), and a batch's items sort by index, so a list of them
 * newest first is in reverse item order.
 */
export function batchItemObjectId(batchId: ObjectId, index: number): ObjectId {
  if (!Number.isInteger(index) || index < 0 || index > 0xffff) throw new RangeError('batch item index out of range');
  const bytes = Buffer.alloc(12);
  batchId.id.subarray(0, 4).forEach((b, i) => (bytes[i] = b));
  digestOf(['batch-item', batchId.toHexString()]).copy(bytes, 4, 0, 6);
  bytes.writeUInt16BE(index, 10);
  return new ObjectId(bytes);
}
