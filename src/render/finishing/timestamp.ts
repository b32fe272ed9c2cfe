// RFC 3161 timestamps for PAdES B-T: a TimeStampReq over the signature value, POSTed to the
// operator's timestamp authority; the answer's token is checked (granted, same imprint and
// nonce, a signature that verifies) before it goes into the signature.
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { RenderError } from '../render-error.ts';

export interface TimestampAuthority {
  /** http(s) URL of an RFC 3161 service (config: the operator's TSA). */
  url: string;
  /** Default 10 s. */
  timeoutMs?: number | undefined;
}

const SHA256 = '2.16.840.1.101.3.4.2.1';
export const engine = new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as Crypto });

const unavailable = (url: string, why: string) =>
  new RenderError('TIMESTAMP_UNAVAILABLE', `The timestamp authority ${url} gave no usable timestamp: ${why}`);

const same = (a: ArrayBuffer | Uint8Array, b: ArrayBuffer | Uint8Array) =>
  Buffer.from(a as ArrayBuffer).equals(Buffer.from(b as ArrayBuffer));

/** The TimeStampToken (a CMS ContentInfo) for `data`, checked. */
export async function requestTimestamp(tsa: TimestampAuthority, data: Uint8Array): Promise<pkijs.ContentInfo> {
  const imprint = createHash('sha256').update(data).digest();
  const nonce = randomBytes(8);
  nonce[0]! &= 0x7f; // a positive INTEGER
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: SHA256, algorithmParams: new asn1js.Null() }),
      hashedMessage: new asn1js.OctetString({ valueHex: imprint }),
    }),
    nonce: new asn1js.Integer({ valueHex: nonce }),
    certReq: true,
  });
  let body: ArrayBuffer;
  try {
    const response = await fetch(tsa.url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: Buffer.from(request.toSchema().toBER()),
      signal: AbortSignal.timeout(tsa.timeoutMs ?? 10_000),
    });
    if (!response.ok) throw unavailable(tsa.url, `HTTP ${response.status}`);
    body = await response.arrayBuffer();
  } catch (err) {
    if (err instanceof RenderError) throw err;
    throw unavailable(
      tsa.url,
      (err as Error)?.name === 'TimeoutError' ? 'no answer in time' : 'it could not be reached',
    );
  }
  let token: pkijs.ContentInfo;
  let info: pkijs.TSTInfo;
  try {
    const answer = pkijs.TimeStampResp.fromBER(body);
    if (answer.status.status > 1) throw unavailable(tsa.url, `status ${answer.status.status} (rejected)`);
    if (!answer.timeStampToken) throw unavailable(tsa.url, 'the answer has no token');
    token = answer.timeStampToken;
    const signed = new pkijs.SignedData({ schema: token.content });
    const eContent = signed.encapContentInfo.eContent;
    if (!eContent) throw unavailable(tsa.url, 'the token has no TSTInfo');
    info = pkijs.TSTInfo.fromBER(eContent.getValue());
    if (!same(info.messageImprint.hashedMessage.getValue(), imprint))
      throw unavailable(tsa.url, 'the token is for other data');
    if (!info.nonce || !same(info.nonce.valueBlock.valueHexView, nonce))
      throw unavailable(tsa.url, 'the token does not carry the request nonce');
    const verified = await signed.verify(
      { signer: 0, checkChain: false, extendedMode: true, data: Uint8Array.from(data).buffer },
      engine,
    );
    if (!verified.signatureVerified) throw unavailable(tsa.url, 'the token signature does not verify');
  } catch (err) {
    if (err instanceof RenderError) throw err;
    throw unavailable(tsa.url, 'the answer is not an RFC 3161 response');
  }
  return token;
}
