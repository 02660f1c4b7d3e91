import { createHash, X509Certificate, type KeyObject } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, type JWK } from 'jose';
import { unprocessable, type AppError } from '../../http/errors.ts';

/**
 * How a payer's institution checks the JWS a payload location answers (BCB's "Manual de
 * Segurança do Pix": jku on the location's host, x5t of the JWK's certificate, the chain up to
 * a trusted root, then the signature). Asymmetric algorithms only: never `none` nor HS*.
 */
export const ALLOWED_ALGORITHMS = ['PS256', 'PS384', 'PS512', 'RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512'] as const;
/** Limits on what a location's host may send: keys in a set, certificates in a chain. */
const MAX_KEYS = 20;
const MAX_CHAIN = 5;

export const jwsInvalid = (reason: string): AppError => unprocessable('JWS_INVALID', `The payload's JWS is refused: ${reason}`);

export interface JwsCheck {
  /** Scheme and host the location was fetched from: the jku must name the same. */
  origin: URL;
  /** Fetches the JWK Set at `jku` (throws a FetchFailure). */
  fetchJwkSet(url: URL): Promise<string>;
  trustedRoots: readonly X509Certificate[];
  /** When the certificates must be valid. */
  now: Date;
}

interface Header {
  alg: string;
  kid: string;
  jku: URL;
  x5t: string;
  x5tS256: string | undefined;
}

function headerOf(jws: string): Header {
  let raw: Record<string, unknown>;
  try {
    raw = decodeProtectedHeader(jws);
  } catch {
    throw jwsInvalid('not a compact JWS');
  }
  const { alg, kid, jku, x5t } = raw;
  if (typeof alg !== 'string' || !(ALLOWED_ALGORITHMS as readonly string[]).includes(alg)) {
    throw jwsInvalid(`alg ${JSON.stringify(alg)} is not allowed (${ALLOWED_ALGORITHMS.join(', ')})`);
  }
  if (typeof kid !== 'string' || kid === '') throw jwsInvalid('the header has no kid');
  if (typeof x5t !== 'string') throw jwsInvalid('the header has no x5t');
  const x5tS256 = raw['x5t#S256'];
  if (x5tS256 !== undefined && typeof x5tS256 !== 'string') throw jwsInvalid('x5t#S256 is not a string');
  if (typeof jku !== 'string' || !URL.canParse(jku)) throw jwsInvalid('the header has no jku URL');
  return { alg, kid, jku: new URL(jku), x5t, x5tS256 };
}

function checkJku(jku: URL, origin: URL): void {
  if (jku.protocol !== origin.protocol) throw jwsInvalid(`jku must be an ${origin.protocol.slice(0, -1)} URL (got ${jku.protocol.slice(0, -1)})`);
  if (jku.host !== origin.host) throw jwsInvalid(`jku is on ${jku.host}, not on the location's host ${origin.host}`);
}

async function jwkOf(check: JwsCheck, header: Header): Promise<JWK & { x5c: string[] }> {
  let set: unknown;
  try {
    set = JSON.parse(await check.fetchJwkSet(header.jku));
  } catch (error) {
    throw jwsInvalid(`jku: no JWK Set at ${header.jku.href} (${(error as Error).message})`);
  }
  const keys = (set as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length > MAX_KEYS) throw jwsInvalid(`jku: not a JWK Set of at most ${MAX_KEYS} keys`);
  const jwk = (keys as JWK[]).find((key) => key !== null && typeof key === 'object' && key.kid === header.kid);
  if (!jwk) throw jwsInvalid(`kid: the JWK Set has no key ${header.kid}`);
  if (jwk.alg !== header.alg) throw jwsInvalid(`alg: the header says ${header.alg}, the JWK ${String(jwk.alg)}`);
  const { x5c } = jwk;
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > MAX_CHAIN || !x5c.every((c) => typeof c === 'string')) {
    throw jwsInvalid(`x5c: the JWK carries no certificate chain (1 to ${MAX_CHAIN})`);
  }
  return { ...jwk, x5c };
}

function certificates(x5c: readonly string[]): { ders: Buffer[]; certs: X509Certificate[] } {
  const ders = x5c.map((text) => Buffer.from(text, 'base64'));
  try {
    return { ders, certs: ders.map((der) => new X509Certificate(der)) };
  } catch {
    throw jwsInvalid('x5c: a certificate does not parse');
  }
}

const thumbprint = (der: Buffer, hash: 'sha1' | 'sha256') => createHash(hash).update(der).digest('base64url');

function checkThumbprints(header: Header, leafDer: Buffer): void {
  if (header.x5t !== thumbprint(leafDer, 'sha1')) throw jwsInvalid("x5t is not the SHA-1 thumbprint of the JWK's certificate");
  if (header.x5tS256 !== undefined && header.x5tS256 !== thumbprint(leafDer, 'sha256')) {
    throw jwsInvalid("x5t#S256 is not the SHA-256 thumbprint of the JWK's certificate");
  }
}

function checkValidity(cert: X509Certificate, index: number, now: Date): void {
  if (now < cert.validFromDate || now > cert.validToDate) throw jwsInvalid(`x5c: certificate ${index} is expired or not yet valid`);
}

const issuedBy = (cert: X509Certificate, issuer: X509Certificate) => issuer.ca && cert.checkIssued(issuer) && cert.verify(issuer.publicKey);

/** Leaf to last, each signed by the next; the last is a trusted root, or issued by one. */
function checkChain(certs: readonly X509Certificate[], roots: readonly X509Certificate[], now: Date): void {
  certs.forEach((cert, index) => checkValidity(cert, index, now));
  for (let i = 0; i + 1 < certs.length; i++) {
    if (!issuedBy(certs[i]!, certs[i + 1]!)) throw jwsInvalid(`x5c: certificate ${i} is not issued and signed by certificate ${i + 1}`);
  }
  const last = certs.at(-1)!;
  const trusted = roots.some(
    (root) => root.fingerprint256 === last.fingerprint256 || (now >= root.validFromDate && now <= root.validToDate && issuedBy(last, root)),
  );
  if (!trusted) throw jwsInvalid('root: the certificate chain does not end at a root the sandbox trusts');
}

/** The JWK's public key must be the certificate's own. */
function checkKeyMatches(jwk: JWK, key: KeyObject): void {
  const fromCert = key.export({ format: 'jwk' }) as Record<string, unknown>;
  const given = jwk as Record<string, unknown>;
  if (!['kty', 'n', 'e', 'crv', 'x', 'y'].every((name) => fromCert[name] === given[name])) {
    throw jwsInvalid("the JWK's key is not the key of its certificate x5c[0]");
  }
}

/** Verifies a payload JWS as a payer does and returns its payload's text. */
export async function verifyPayloadJws(jws: string, check: JwsCheck): Promise<string> {
  const header = headerOf(jws);
  checkJku(header.jku, check.origin);
  const jwk = await jwkOf(check, header);
  const { ders, certs } = certificates(jwk.x5c);
  checkThumbprints(header, ders[0]!);
  checkChain(certs, check.trustedRoots, check.now);
  const key = certs[0]!.publicKey;
  checkKeyMatches(jwk, key);
  try {
    const verified = await compactVerify(jws, key, { algorithms: [header.alg] });
    return new TextDecoder('utf-8', { fatal: true }).decode(verified.payload);
  } catch {
    throw jwsInvalid('signature: the signature does not verify with the certificate\'s key');
  }
}
