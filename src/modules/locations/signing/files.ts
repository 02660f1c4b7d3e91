import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createPayloadSigner, type PayloadSigner } from './signer.ts';

const CERTIFICATE_PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM bundle, in order, as DER. */
export function pemChain(text: string): Buffer[] {
  return (text.match(CERTIFICATE_PEM) ?? []).map((pem) => new X509Certificate(pem).raw);
}

/**
 * Checks a payload-signing key and chain given as files (QR_SIGNING_KEY_FILE, _CHAIN_FILE): a
 * private key in PEM, and a chain of at least the leaf and its root, each issued by the next,
 * whose leaf holds the key's public half. Returns the variable and what is wrong with it, or null.
 */
export function signingFilesProblem(keyPem: string, chainPem: string): { variable: string; problem: string } | null {
  const key = 'QR_SIGNING_KEY_FILE';
  const chainFile = 'QR_SIGNING_CHAIN_FILE';
  let privateKey;
  try {
    privateKey = createPrivateKey(keyPem);
  } catch {
    return { variable: key, problem: 'must hold a private key in PEM' };
  }
  let chain: X509Certificate[];
  try {
    chain = (chainPem.match(CERTIFICATE_PEM) ?? []).map((pem) => new X509Certificate(pem));
  } catch {
    return { variable: chainFile, problem: 'must hold PEM certificates' };
  }
  if (chain.length < 2) return { variable: chainFile, problem: 'must hold the signing certificate and its chain up to the root (leaf first, root last)' };
  if (!chain[0]!.checkPrivateKey(privateKey)) return { variable: key, problem: "is not the key of the chain's first certificate" };
  for (let i = 0; i < chain.length - 1; i++) {
    if (!chain[i]!.checkIssued(chain[i + 1]!) || !chain[i]!.verify(chain[i + 1]!.publicKey)) return { variable: chainFile, problem: `holds certificate ${i + 1}, not issued by the next one` };
  }
  return null;
}

/** The payload signer of production: the key and chain of the files; `jku` is the JWK Set's address under PUBLIC_URL. */
export async function payloadSignerFromFiles(files: { keyFile: string; chainFile: string }, jku: string): Promise<PayloadSigner> {
  const privateKeyPem = createPrivateKey(readFileSync(files.keyFile, 'utf8')).export({ type: 'pkcs8', format: 'pem' }).toString();
  const chain = pemChain(readFileSync(files.chainFile, 'utf8'));
  return createPayloadSigner({ privateKeyPem, chain, jku });
}
