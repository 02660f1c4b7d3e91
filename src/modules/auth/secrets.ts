import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Client secrets are stored only as an scrypt hash and compared in constant time. The secrets
 * are 256 random bits issued by us, so the work factor guards a database leak, not guessing.
 */
const PARAMS = { N: 32_768, r: 8, p: 1, keylen: 32 } as const;

function derive(secret: string, salt: Buffer, options: ScryptOptions & { keylen: number }): Promise<Buffer> {
  const { keylen, ...scryptOptions } = options;
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, keylen, { ...scryptOptions, maxmem: 128 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(secret, salt, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltText, keyText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !keyText) return false;
  const expected = Buffer.from(keyText, 'base64url');
  const actual = await derive(secret, Buffer.from(saltText, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    keylen: expected.length,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
