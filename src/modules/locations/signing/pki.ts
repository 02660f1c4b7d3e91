// @peculiar/x509 resolves its services through tsyringe, which needs the metadata polyfill.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

/**
 * The sandbox's payload-signing PKI: a root CA and the RSA certificates it issues to sign the
 * JWS of payload locations with PS256 (docs/decisions/0032-payload-signing.md). Certificates are
 * signed with RSASSA-PKCS1-v1_5 SHA-256, which every payer's X.509 stack verifies.
 */
const RSA_KEY = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' } as const;
const CERT_SIGNATURE = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;
export const ROOT_VALIDITY_DAYS = 3650;
export const LEAF_VALIDITY_DAYS = 365;
/** Certificates start a little in the past, so that a payer whose clock lags accepts them. */
const BACKDATE_MS = 5 * 60_000;

/** A certificate (DER) and its private key (PKCS#8 PEM). */
export interface CertificateAndKey {
  readonly certificateDer: Buffer;
  readonly privateKeyPem: string;
}

function toPem(label: string, der: ArrayBuffer | Buffer): string {
  const body = Buffer.from(der as ArrayBuffer).toString('base64').replace(/(.{64})/g, '$1\n').trimEnd();
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

function fromPem(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

/** A positive 16-byte serial number, as RFC 5280 asks (at most 20 octets, not negative). */
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}

async function newKeyPair(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(RSA_KEY, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
}

async function exportPrivateKey(key: webcrypto.CryptoKey): Promise<string> {
  return toPem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', key));
}

/** The host as a DNS name or an IP address (PUBLIC_URL's hostname may carry IPv6 brackets). */
function subjectAlternativeName(host: string): x509.SubjectAlternativeNameExtension {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return new x509.SubjectAlternativeNameExtension([{ type: isIP(bare) ? 'ip' : 'dns', value: bare }]);
}

/** A self-signed root that only signs certificates. */
export async function generateRoot(now: Date): Promise<CertificateAndKey> {
  const keys = await newKeyPair();
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: 'CN=Pix Sandbox Payload Signing Root CA, O=Pix Sandbox',
    keys,
    notBefore,
    notAfter: new Date(notBefore.getTime() + ROOT_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: CERT_SIGNATURE,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificateDer: Buffer.from(cert.rawData), privateKeyPem: await exportPrivateKey(keys.privateKey) };
}

/** A certificate for `host`, issued by `root`, whose key signs payloads (digitalSignature only). */
export async function issueSigningCertificate(root: CertificateAndKey, host: string, now: Date): Promise<CertificateAndKey> {
  const rootCert = new x509.X509Certificate(root.certificateDer);
  const rootKey = await webcrypto.subtle.importKey('pkcs8', fromPem(root.privateKeyPem), RSA_KEY, false, ['sign']);
  const keys = await newKeyPair();
  const notBefore = new Date(now.getTime() - BACKDATE_MS);
  const notAfter = new Date(Math.min(notBefore.getTime() + LEAF_VALIDITY_DAYS * DAY_MS, rootCert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: `CN=${host.replace(/^\[(.*)\]$/, '$1')}, O=Pix Sandbox`,
    issuer: rootCert.subject,
    publicKey: keys.publicKey,
    signingKey: rootKey,
    notBefore,
    notAfter,
    signingAlgorithm: CERT_SIGNATURE,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      subjectAlternativeName(host),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(rootCert),
    ],
  });
  return { certificateDer: Buffer.from(cert.rawData), privateKeyPem: await exportPrivateKey(keys.privateKey) };
}
