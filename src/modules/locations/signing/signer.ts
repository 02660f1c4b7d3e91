import { constants, createHash, createPrivateKey, sign, X509Certificate } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';

/**
 * The JWS of payload locations and the JWK Set its `jku` names, as BCB's payer checks them
 * (docs/decisions/0032-payload-signing.md): PS256, `x5t`/`x5t#S256` in base64url, the same
 * `alg` in the header and the JWK, and `x5c` carrying the whole chain up to the root.
 */
export const PAYLOAD_SIGNING_ALGORITHM = 'PS256';
/** Where the service serves the JWK Set, under PUBLIC_URL: the `jku` of every payload JWS. */
export const JWK_SET_PATH = '/qr/jwks';

/** One key of the JWK Set: the public key, with its certificate chain and thumbprints. */
export interface PayloadJwk extends JWK {
  kty: string;
  kid: string;
  use: 'sig';
  alg: string;
  x5c: string[];
  x5t: string;
  'x5t#S256': string;
}

export interface PayloadJwkSet {
  keys: PayloadJwk[];
}

/** A certificate chain, leaf first and root last, each certificate DER. */
export type CertificateChain = readonly Buffer[];

export interface PayloadSigner {
  readonly kid: string;
  readonly jku: string;
  /** Every key a payload of this service may be signed with, the signing one first. */
  readonly jwkSet: PayloadJwkSet;
  /** The root of the signing chain: what a payer must trust. */
  readonly root: X509Certificate;
  /** A compact JWS over the payload's JSON, with header `{alg, kid, jku, x5t, x5t#S256}`. */
  signPayload(payload: object): Promise<string>;
}

const thumbprint = (der: Buffer, hash: 'sha1' | 'sha256') => createHash(hash).update(der).digest('base64url');

/** The JWK of a chain's leaf, with `x5c` (standard base64, as RFC 7517 says) and both thumbprints. */
export async function payloadJwk(chain: CertificateChain, algorithm: string = PAYLOAD_SIGNING_ALGORITHM): Promise<PayloadJwk> {
  const [leaf] = chain;
  if (!leaf || chain.length < 2) throw new Error('a payload-signing chain holds the leaf and, last, its root');
  const publicJwk = new X509Certificate(leaf).publicKey.export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    ...publicJwk,
    kty: publicJwk.kty!,
    kid,
    use: 'sig',
    alg: algorithm,
    x5c: chain.map((der) => der.toString('base64')),
    x5t: thumbprint(leaf, 'sha1'),
    'x5t#S256': thumbprint(leaf, 'sha256'),
  };
}

/**
 * A signer from the leaf's private key (PKCS#8 PEM) and its chain; `others` are chains of keys
 * that still verify (an older certificate of the same host), listed after the signing one.
 */
export async function createPayloadSigner(options: {
  privateKeyPem: string;
  chain: CertificateChain;
  jku: string;
  others?: readonly CertificateChain[];
}): Promise<PayloadSigner> {
  const jwk = await payloadJwk(options.chain);
  const others = await Promise.all((options.others ?? []).map((chain) => payloadJwk(chain)));
  const key = createPrivateKey(options.privateKeyPem);
  if (key.asymmetricKeyType !== 'rsa') throw new Error(`a ${PAYLOAD_SIGNING_ALGORITHM} signing key is an RSA key, not ${key.asymmetricKeyType}`);
  const root = new X509Certificate(options.chain.at(-1)!);
  const header = { alg: jwk.alg, kid: jwk.kid, jku: options.jku, x5t: jwk.x5t, 'x5t#S256': jwk['x5t#S256'] };
  const jwkSet: PayloadJwkSet = { keys: [jwk, ...others.filter((other) => other.kid !== jwk.kid)] };
  return { kid: jwk.kid, jku: options.jku, jwkSet, root, signPayload: compactSigner(key, header) };
}

/**
 * RFC 7515's compact serialization, signed with PS256 (RSASSA-PSS, SHA-256, a 32-byte salt) by
 * node:crypto's callback form: the signature is made on libuv's threads, and this is the
 * endpoint every QR scan hits, where WebCrypto (through jose) cost a quarter of the rate
 * (docs/decisions/0032-payload-signing.md). The header, the same for every payload, is encoded once.
 */
function compactSigner(key: ReturnType<typeof createPrivateKey>, header: object): (payload: object) => Promise<string> {
  const encodedHeader = Buffer.from(JSON.stringify(header), 'utf8').toString('base64url');
  const options = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 };
  return (payload) =>
    new Promise((resolve, reject) => {
      const input = `${encodedHeader}.${Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url')}`;
      sign('sha256', Buffer.from(input, 'ascii'), options, (error, signature) => (error ? reject(error) : resolve(`${input}.${signature.toString('base64url')}`)));
    });
}
