// An RFC 3161 timestamp authority on 127.0.0.1 for tests: it answers application/timestamp-query
// POSTs with real TimeStampResp messages (TSTInfo in a CMS SignedData signed by the test TSA's
// key, with the ESS signing-certificate-v2 attribute), so that `openssl ts -verify` accepts them.
// It counts requests and can be told to refuse.
import { createHash, createPrivateKey, webcrypto } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as asn1js from 'asn1js';
import forge from 'node-forge';
import * as pkijs from 'pkijs';
import type { TestCertificate } from './signing-certificates.ts';

const engine = new pkijs.CryptoEngine({ name: 'node', crypto: webcrypto as unknown as Crypto });
const ID_CT_TSTINFO = '1.2.840.113549.1.9.16.1.4';

export interface LoopbackTsa {
  url: string;
  requests: number;
  /** Answer with status 2 (rejection) instead of a token. */
  reject: boolean;
  close(): Promise<void>;
}

async function stamp(request: pkijs.TimeStampReq, tsa: TestCertificate, serial: number): Promise<ArrayBuffer> {
  const der = Buffer.from(forge.asn1.toDer(forge.pki.certificateToAsn1(tsa.cert)).getBytes(), 'binary');
  const cert = pkijs.Certificate.fromBER(der);
  const info = new pkijs.TSTInfo({
    version: 1,
    policy: '1.3.6.1.4.1.99999.1',
    messageImprint: request.messageImprint,
    serialNumber: new asn1js.Integer({ value: serial }),
    genTime: new Date(),
    ordering: false,
    ...(request.nonce ? { nonce: request.nonce } : {}),
  });
  const infoDer = info.toSchema().toBER();
  const attr = (type: string, value: asn1js.AsnType) => new pkijs.Attribute({ type, values: [value] });
  const certHash = createHash('sha256').update(der).digest();
  const signingCertificateV2 = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({
        value: [new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: certHash })] })],
      }),
    ],
  });
  const signed = new pkijs.SignedData({
    version: 3,
    encapContentInfo: new pkijs.EncapsulatedContentInfo({
      eContentType: ID_CT_TSTINFO,
      eContent: new asn1js.OctetString({ valueHex: infoDer }),
    }),
    signerInfos: [
      new pkijs.SignerInfo({
        version: 1,
        sid: new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber }),
        signedAttrs: new pkijs.SignedAndUnsignedAttributes({
          type: 0,
          attributes: [
            attr('1.2.840.113549.1.9.3', new asn1js.ObjectIdentifier({ value: ID_CT_TSTINFO })),
            attr(
              '1.2.840.113549.1.9.4',
              new asn1js.OctetString({ valueHex: createHash('sha256').update(Buffer.from(infoDer)).digest() }),
            ),
            attr('1.2.840.113549.1.9.16.2.47', signingCertificateV2),
          ],
        }),
      }),
    ],
    certificates: request.certReq ? [cert] : [],
  });
  const key = createPrivateKey(forge.pki.privateKeyToPem(tsa.key)).toCryptoKey(
    { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    false,
    ['sign'],
  ) as unknown as CryptoKey;
  await signed.sign(key, 0, 'SHA-256', undefined, engine);
  const response = new pkijs.TimeStampResp({
    status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.granted }),
    timeStampToken: new pkijs.ContentInfo({ contentType: '1.2.840.113549.1.7.2', content: signed.toSchema(true) }),
  });
  return response.toSchema().toBER();
}

export async function startLoopbackTsa(tsa: TestCertificate): Promise<LoopbackTsa> {
  let serial = 1;
  const state = { requests: 0, reject: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests += 1;
      void (async () => {
        try {
          if (req.headers['content-type'] !== 'application/timestamp-query') {
            res.writeHead(415).end();
            return;
          }
          const request = pkijs.TimeStampReq.fromBER(Buffer.concat(chunks));
          const body = state.reject
            ? new pkijs.TimeStampResp({ status: new pkijs.PKIStatusInfo({ status: pkijs.PKIStatus.rejection }) })
                .toSchema()
                .toBER()
            : await stamp(request, tsa, serial++);
          res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(Buffer.from(body));
        } catch {
          res.writeHead(400).end();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/tsa`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
