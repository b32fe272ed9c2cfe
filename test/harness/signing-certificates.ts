// Test certificates for signing: a CA, signers (valid, expired) and a timestamp authority, made
// with node-forge from Node's RSA keys, written as PEM and PKCS#12 files that the independent
// tools (openssl, pdfsig) read too.
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';

export interface TestCertificate {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
  pem: string;
}

let serial = 1;

export function makeCertificate(options: {
  commonName: string;
  notBefore: Date;
  notAfter: Date;
  issuer?: TestCertificate;
  ca?: boolean;
  timestamping?: boolean;
}): TestCertificate {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs1', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  cert.serialNumber = (0x1000 + serial++).toString(16);
  cert.validity.notBefore = options.notBefore;
  cert.validity.notAfter = options.notAfter;
  const subject = [
    { name: 'commonName', value: options.commonName },
    { name: 'organizationName', value: 'docgen tests' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(options.issuer ? options.issuer.cert.subject.attributes : subject);
  const extensions: object[] = [
    { name: 'basicConstraints', cA: options.ca === true, critical: true },
    {
      name: 'keyUsage',
      critical: true,
      ...(options.ca ? { keyCertSign: true, cRLSign: true } : { digitalSignature: true, nonRepudiation: true }),
    },
    { name: 'subjectKeyIdentifier' },
  ];
  if (options.timestamping) extensions.push({ name: 'extKeyUsage', critical: true, timeStamping: true });
  cert.setExtensions(extensions);
  cert.sign(options.issuer?.key ?? key, forge.md.sha256.create());
  return { cert, key, pem: forge.pki.certificateToPem(cert) };
}

/** A PKCS#12 file with the key, its certificate and the chain. */
export function pkcs12(subject: TestCertificate, chain: TestCertificate[], password: string): Buffer {
  const asn1 = forge.pkcs12.toPkcs12Asn1(subject.key, [subject.cert, ...chain.map((c) => c.cert)], password, {
    algorithm: 'aes256',
    friendlyName: 'signer',
  });
  return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary');
}

const DAY = 86_400_000;

/** A CA, a signer valid now, an expired signer, and a timestamp authority. */
export function testPki(now = new Date()) {
  const ca = makeCertificate({
    commonName: 'docgen Test CA',
    notBefore: new Date(now.getTime() - 30 * DAY),
    notAfter: new Date(now.getTime() + 3650 * DAY),
    ca: true,
  });
  const signer = makeCertificate({
    commonName: 'Nordlicht Software GmbH Signer',
    notBefore: new Date(now.getTime() - DAY),
    notAfter: new Date(now.getTime() + 365 * DAY),
    issuer: ca,
  });
  const expired = makeCertificate({
    commonName: 'Expired Signer',
    notBefore: new Date(now.getTime() - 400 * DAY),
    notAfter: new Date(now.getTime() - 35 * DAY),
    issuer: ca,
  });
  const tsa = makeCertificate({
    commonName: 'docgen Test TSA',
    notBefore: new Date(now.getTime() - DAY),
    notAfter: new Date(now.getTime() + 365 * DAY),
    issuer: ca,
    timestamping: true,
  });
  return { ca, signer, expired, tsa };
}
