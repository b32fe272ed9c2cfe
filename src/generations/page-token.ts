// Opaque, tamper-proof page tokens for GET /v1/generations: the keyset cursor plus a hash of
// the query it belongs to, MAC'd with a key derived from DOCGEN_SECRET_KEY. A forged token,
// or one replayed with other filters or by another workspace, is refused.
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { ObjectId } from 'mongodb';

export interface Cursor {
  createdAt: Date;
  id: ObjectId;
}

export class PageTokenCodec {
  private readonly key: Buffer;
  constructor(secretKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'docgen page tokens v1', 32));
  }

  static queryHash(parts: Record<string, string | undefined>): string {
    const canonical = Object.keys(parts)
      .sort()
      .map((k) => `${k}=${parts[k] ?? ''}`)
      .join('&');
    return createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
  }

  encode(cursor: Cursor, queryHash: string): string {
    const payload = Buffer.from(
      JSON.stringify({ t: cursor.createdAt.getTime(), i: cursor.id.toHexString(), q: queryHash }),
    ).toString('base64url');
    return `${payload}.${this.mac(payload)}`;
  }

  /** The cursor, or undefined when the token is not one of ours for this query. */
  decode(token: string, queryHash: string): Cursor | undefined {
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined) return undefined;
    const expected = Buffer.from(this.mac(payload));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    try {
      const { t, i, q } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
        t: unknown;
        i: unknown;
        q: unknown;
      };
      if (q !== queryHash || typeof t !== 'number' || typeof i !== 'string' || !/^[0-9a-f]{24}$/.test(i))
        return undefined;
      return { createdAt: new Date(t), id: new ObjectId(i) };
    } catch {
      return undefined;
    }
  }

  private mac(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url');
  }
}
