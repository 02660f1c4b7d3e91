/**
 * The sandbox payer reads the service's own payload locations over HTTPS when the service
 * terminates TLS itself with a certificate of a private CA (as every local HTTPS set-up has): it
 * trusts the certificates of TLS_CERT_FILE for PUBLIC_URL, and for that address only. Failures
 * at other private addresses are one class, whatever happened.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDynamicBrCode, parseAnyBrCode } from '../src/lib/brcode.ts';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { UNREACHABLE } from '../src/modules/payer/fetch.ts';
import { assertError } from './assertions.ts';
import { createClient, evpKey, type TestClient } from './factories.ts';
import { adminHeaders, startTestApp, type TestApp } from './harness.ts';
import { freePort } from './processes.ts';

describe('the sandbox payer and the service on HTTPS with a private CA', () => {
  let dir: string;
  let t: TestApp;
  let port: number;
  let a: TestClient;
  let key: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pix-payer-tls-'));
    // A leaf of a private CA, the CA nowhere in the file nor in any store: as mkcert's.
    const ca = await issueCertificate({ commonName: 'Local Dev CA', isCa: true });
    const leaf = await issueCertificate({ commonName: '127.0.0.1', issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'server.crt'), leaf.certPem);
    writeFileSync(join(dir, 'server.key'), leaf.keyPem, { mode: 0o600 });
    port = await freePort();
    t = await startTestApp({
      env: { TLS_CERT_FILE: join(dir, 'server.crt'), TLS_KEY_FILE: join(dir, 'server.key'), PUBLIC_URL: `https://127.0.0.1:${port}` },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    a = await createClient(t);
    key = await evpKey(t, a.accountId);
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const pay = (pixCopiaECola: string) => t.app.inject({ method: 'POST', url: '/sandbox/payer/pay', headers: adminHeaders, payload: { pixCopiaECola, payer: { name: 'Pagadora', document: '52998224725' } } });

  it("pays the service's own dynamic code: its location fetched over HTTPS, trusting TLS_CERT_FILE", async () => {
    const cob = await t.app.inject({ method: 'POST', url: '/v2/cob', headers: a.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '12.34' }, chave: key } });
    assert.equal(cob.statusCode, 201, cob.body);
    const { pixCopiaECola, txid } = cob.json<{ pixCopiaECola: string; txid: string }>();
    const paid = await pay(pixCopiaECola);
    assert.equal(paid.statusCode, 201, paid.body);
    assert.deepEqual([paid.json<{ amount: string }>().amount, paid.json<{ txid: string }>().txid], ['12.34', txid]);
  });

  it('trusts that certificate for PUBLIC_URL only: the same server under another name is not trusted, and a private failure is one class', async () => {
    const cob = await t.app.inject({ method: 'POST', url: '/v2/cob', headers: a.headers, payload: { calendario: { expiracao: 3600 }, valor: { original: '1.00' }, chave: key } });
    const { pixCopiaECola } = cob.json<{ pixCopiaECola: string }>();
    // The same location at https://localhost:port: another origin, whose certificate chain ends at a CA the payer does not know.
    const elsewhere = rewrite(pixCopiaECola, `127.0.0.1:${port}`, `localhost:${port}`);
    assertError(await pay(elsewhere), 422, new RegExp(escape(UNREACHABLE)), 'LOCATION_UNREACHABLE');
    // Nothing listening at another private port: the same words.
    const closed = await freePort();
    assertError(await pay(rewrite(pixCopiaECola, `127.0.0.1:${port}`, `127.0.0.1:${closed}`)), 422, new RegExp(escape(UNREACHABLE)), 'LOCATION_UNREACHABLE');
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The dynamic BR Code with its location's host changed (and its CRC made again). */
function rewrite(code: string, from: string, to: string): string {
  const parsed = parseAnyBrCode(code);
  assert.equal(parsed.kind, 'dynamic');
  if (parsed.kind !== 'dynamic') throw new Error('not a dynamic code');
  return buildDynamicBrCode({ location: parsed.location.replace(from, to), merchantName: parsed.merchantName, merchantCity: parsed.merchantCity });
}
