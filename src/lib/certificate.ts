import { createHash, X509Certificate } from 'node:crypto';

export interface ParsedCertificate {
  readonly x509: X509Certificate;
  /** SHA-256 of the DER, lowercase hex: the fingerprint the operator API speaks. */
  readonly fingerprint: string;
  /** SHA-256 of the DER, base64url: the token's `cnf.x5t#S256` (RFC 8705). */
  readonly thumbprint: string;
  readonly notBefore: Date;
  readonly notAfter: Date;
  readonly subject: string;
}

const PEM_BLOCK = /^-----BEGIN CERTIFICATE-----\r?\n?([A-Za-z0-9+/=\s]+?)\r?\n?-----END CERTIFICATE-----\s*$/;
const MAX_PEM_LENGTH = 16_384;

export function fromX509(x509: X509Certificate): ParsedCertificate {
  const digest = createHash('sha256').update(x509.raw).digest();
  return {
    x509,
    fingerprint: digest.toString('hex'),
    thumbprint: digest.toString('base64url'),
    notBefore: new Date(x509.validFrom),
    notAfter: new Date(x509.validTo),
    subject: x509.subject.replace(/\n/g, ', '),
  };
}

/** Parses exactly one PEM certificate; null when the text is not one. */
export function parsePemCertificate(pem: string): ParsedCertificate | null {
  const text = pem.trim();
  if (text.length > MAX_PEM_LENGTH || !PEM_BLOCK.test(text)) return null;
  try {
    return fromX509(new X509Certificate(text));
  } catch {
    return null;
  }
}

export function thumbprintToFingerprint(thumbprint: string): string {
  return Buffer.from(thumbprint, 'base64url').toString('hex');
}

export function isCurrentlyValid(cert: { notBefore: Date; notAfter: Date }, now: Date): boolean {
  return cert.notBefore.getTime() <= now.getTime() && now.getTime() <= cert.notAfter.getTime();
}
