// @peculiar/x509 resolves its services through tsyringe, which needs the metadata polyfill.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { systemClock } from './clock.ts';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface IssuedCertificate {
  readonly certPem: string;
  readonly keyPem: string;
  readonly cert: x509.X509Certificate;
  readonly keys: CryptoKeyPair;
}

export interface CertificateRequest {
  commonName: string;
  notBefore?: Date;
  notAfter?: Date;
  /** Signs with this issuer; without it the certificate is self-signed. */
  issuer?: IssuedCertificate;
  isCa?: boolean;
  /** DNS names and IP addresses for a server certificate. */
  dnsNames?: string[];
  ipAddresses?: string[];
}

function toPem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').trimEnd();
  return `-----BEGIN ${label}-----\n${body}\n-----END ${label}-----\n`;
}

/**
 * Issues X.509 certificates (ECDSA P-256): the demo account's client certificate, and in tests
 * client certificates, a private CA and server certificates for TLS.
 */
export async function issueCertificate(request: CertificateRequest): Promise<IssuedCertificate> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = request.notBefore ?? new Date(systemClock.now().getTime() - 60_000);
  const notAfter = request.notAfter ?? new Date(notBefore.getTime() + 365 * DAY_MS);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(Boolean(request.isCa), undefined, true),
    new x509.KeyUsagesExtension(
      request.isCa ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign : x509.KeyUsageFlags.digitalSignature,
      true,
    ),
  ];
  const names = [
    ...(request.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(request.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  if (!request.isCa) {
    extensions.push(new x509.ExtendedKeyUsageExtension([names.length > 0 ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth]));
  }
  const subject = `CN=${request.commonName}`;
  const cert = request.issuer
    ? await x509.X509CertificateGenerator.create({
        subject,
        issuer: request.issuer.cert.subject,
        publicKey: keys.publicKey,
        signingKey: request.issuer.keys.privateKey,
        notBefore,
        notAfter,
        signingAlgorithm: ALGORITHM,
        extensions,
      })
    : await x509.X509CertificateGenerator.createSelfSigned({ name: subject, keys, notBefore, notAfter, signingAlgorithm: ALGORITHM, extensions });
  const keyPem = toPem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return { certPem: cert.toString('pem') + '\n', keyPem, cert, keys };
}
