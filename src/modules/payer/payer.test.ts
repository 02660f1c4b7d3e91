import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { CompactSign, importPKCS8 } from 'jose';
import { createClient, evpKey, externalKey, randomCnpj, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { testKek } from '../../../test/signing-keys.ts';
import { unseal } from '../auth/key-encryption.ts';
import { buildBrCode, buildDynamicBrCode, parseAnyBrCode } from '../../lib/brcode.ts';
import { formatCentavos } from '../../lib/money.ts';
import { createCharge, type ChargeInput } from '../charges/service.ts';
import type { ChargeRow } from '../charges/repo.ts';
import { holderBalances } from '../ledger/service.ts';
import { findLocationByToken } from '../locations/repo.ts';
import { generateRoot, issueSigningCertificate, type CertificateAndKey } from '../locations/signing/pki.ts';
import { findAuthority } from '../locations/signing/repo.ts';
import { preparePayloadSigner } from '../locations/signing/service.ts';
import { payloadJwk, type PayloadJwk, type PayloadSigner } from '../locations/signing/signer.ts';

/**
 * The payer against a payload server of its own: PUBLIC_URL names this test's HTTP server, which
 * answers the service's locations the way the service does (a JWS signed by the database's
 * payload-signing PKI), or whatever a test makes it answer for one location.
 */
type Answer = { status: number; body: string; type?: string };
type Handler = (url: URL) => Promise<Answer> | Answer;

/** A signing key of a test's own (its chain and private key), to sign any header. */
interface Crafted {
  jwk: PayloadJwk;
  sign(payload: object, header?: Record<string, unknown>): Promise<string>;
}

async function craftedKey(root: CertificateAndKey, jku: string, now: Date): Promise<Crafted> {
  const leaf = await issueSigningCertificate(root, '127.0.0.1', now);
  const jwk = await payloadJwk([leaf.certificateDer, root.certificateDer]);
  const key = await importPKCS8(leaf.privateKeyPem, 'PS256');
  const base = { alg: 'PS256', kid: jwk.kid, jku, x5t: jwk.x5t, 'x5t#S256': jwk['x5t#S256'] };
  return {
    jwk,
    sign: (payload, header = {}) => new CompactSign(Buffer.from(JSON.stringify(payload))).setProtectedHeader({ ...base, ...header } as never).sign(key),
  };
}

describe('POST /sandbox/payer/pay', () => {
  let t: TestApp;
  let server: Server;
  let origin: string;
  let signer: PayloadSigner;
  let trusted: Crafted;
  let rogue: Crafted;
  let trustedRoot: CertificateAndKey;
  let holder: TestClient;
  let holderKey: string;
  const answers = new Map<string, Handler>();
  const seen: URL[] = [];

  const pay = (body: Record<string, unknown>, headers: Record<string, string> = adminHeaders) =>
    t.app.inject({ method: 'POST', url: '/sandbox/payer/pay', headers, payload: { payer: { name: 'Paula Pagadora', document: randomCpf() }, ...body } });
  const available = async (accountId: number) => (await holderBalances(t.db, BigInt(accountId)))!.available;
  const chargeDeps = () => ({ db: t.db, clock: t.clock, ispb: t.config.pspIspb, publicUrl: t.config.publicUrl });
  const txid = () => randomBytes(16).toString('hex');
  const tokenOf = (row: ChargeRow) => {
    const code = parseAnyBrCode(row.pix_copia_e_cola!);
    assert.equal(code.kind, 'dynamic');
    return code.location.split('/').at(-1)!;
  };
  const chargeRow = (id: bigint) => t.db.selectFrom('charges').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** The payload a location of this service serves for a cob (BCB's CobPayload). */
  const cobPayload = (row: ChargeRow) => ({
    calendario: { criacao: row.created_at.toISOString(), apresentacao: t.clock.now().toISOString(), expiracao: row.expiracao_seconds },
    txid: row.txid,
    revisao: row.revisao,
    status: row.status,
    valor: { original: formatCentavos(row.amount_centavos), modalidadeAlteracao: row.modalidade_alteracao },
    chave: row.chave,
  });

  /** What the service's own location route does: the current charge, signed by the service's signer. */
  async function servedLocation(url: URL): Promise<Answer> {
    const location = await findLocationByToken(t.db, url.pathname.split('/').at(-1)!);
    if (!location?.charge_id) return { status: 404, body: '{}' };
    return { status: 200, type: 'application/jose', body: await signer.signPayload(cobPayload(await chargeRow(location.charge_id))) };
  }

  async function handle(url: URL): Promise<Answer> {
    const given = answers.get(url.pathname);
    if (given) return given(url);
    if (url.pathname === '/qr/jwks') return { status: 200, type: 'application/json', body: JSON.stringify(signer.jwkSet) };
    if (url.pathname === '/crafted/jwks') return { status: 200, type: 'application/json', body: JSON.stringify({ keys: [trusted.jwk] }) };
    if (url.pathname === '/rogue/jwks') return { status: 200, type: 'application/json', body: JSON.stringify({ keys: [rogue.jwk] }) };
    if (url.pathname.startsWith('/qr/v2/')) return servedLocation(url);
    return { status: 404, body: '{}' };
  }

  /** A charge of the holder, with its location served as this service serves it unless a test says otherwise. */
  async function charge(input: Partial<ChargeInput> = {}): Promise<ChargeRow & { token: string }> {
    const row = await createCharge(chargeDeps(), BigInt(holder.accountId), { valor: { original: '10.00' }, chave: holderKey, ...input }, txid());
    return { ...row, token: tokenOf(row) };
  }

  const serve = (path: string, jws: () => Promise<string> | string) =>
    answers.set(path, async () => ({ status: 200, type: 'application/jose', body: await jws() }));

  /** A 422 with this code whose message matches, after which the holder's balance and the charge are as before. */
  async function refused(body: Record<string, unknown>, code: string, message: RegExp, row?: ChargeRow) {
    const before = await available(holder.accountId);
    const res = await pay(body);
    assert.equal(res.statusCode, 422, res.body);
    const error = res.json<{ code: string; message: string }>();
    assert.equal(error.code, code, res.body);
    assert.match(error.message, message);
    assert.equal(await available(holder.accountId), before, 'nothing is credited');
    if (row) assert.equal((await chargeRow(row.id)).paid_transaction_id, null);
  }

  before(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', origin);
      seen.push(url);
      void Promise.resolve(handle(url))
        .catch((error: unknown) => ({ status: 500, body: String(error) }) as Answer)
        .then((answer) => response.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json' }).end(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startTestApp({ env: { PUBLIC_URL: origin } });
    const kek = { key: testKek(), source: 'KEY_ENCRYPTION_KEY' as const };
    signer = await preparePayloadSigner(t.db, kek, { publicUrl: origin, now: t.clock.now() });
    const authority = (await findAuthority(t.db))!;
    const root = { certificateDer: Buffer.from(authority.certificate, 'base64'), privateKeyPem: unseal(kek.key, 'payload-signing-root', authority.private_key_sealed) };
    trustedRoot = root;
    trusted = await craftedKey(root, `${origin}/crafted/jwks`, t.clock.now());
    rogue = await craftedKey(await generateRoot(t.clock.now()), `${origin}/rogue/jwks`, t.clock.now());
    holder = await createClient(t, { name: 'Loja Recebedora' });
    holderKey = await evpKey(t, holder.accountId);
  });
  after(async () => {
    await t?.close();
    server?.close();
  });

  describe('static codes', () => {
    it('201: a code of this service\'s key pays its amount and credits the account, as an incoming Pix', async () => {
      const before = await available(holder.accountId);
      const code = buildBrCode({ key: holderKey, amountCentavos: 1234n, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      const res = await pay({ pixCopiaECola: code, payer: { name: 'Paula Pagadora', document: '52998224725', ispb: '60746948' } });
      assert.equal(res.statusCode, 201, res.body);
      const paid = res.json<{ endToEndId: string; transactionId: number; amount: string; txid: null }>();
      assert.deepEqual({ amount: paid.amount, txid: paid.txid }, { amount: '12.34', txid: null });
      assert.match(paid.endToEndId, /^E60746948\d{12}[a-zA-Z0-9]{11}$/);
      assert.equal(await available(holder.accountId), before + 1234n);
      const row = await t.db.selectFrom('transactions').selectAll().where('id', '=', BigInt(paid.transactionId)).executeTakeFirstOrThrow();
      assert.deepEqual([row.type, row.amount_centavos, row.counterpart_name, row.end_to_end_id], ['PAYMENT', 1234n, 'Paula Pagadora', paid.endToEndId]);
    });

    it("201: a code without an amount pays `amount`; one with an amount refuses another; none at all is AMOUNT_REQUIRED", async () => {
      const open = buildBrCode({ key: holderKey, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      const before = await available(holder.accountId);
      const res = await pay({ pixCopiaECola: open, amount: '5.00' });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json<{ amount: string }>().amount, '5.00');
      assert.equal(await available(holder.accountId), before + 500n);
      await refused({ pixCopiaECola: open }, 'AMOUNT_REQUIRED', /amount/);
      const fixed = buildBrCode({ key: holderKey, amountCentavos: 700n, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      await refused({ pixCopiaECola: fixed, amount: '7.01' }, 'AMOUNT_NOT_ALLOWED', /7\.00/);
      assert.equal((await pay({ pixCopiaECola: fixed, amount: '7.00' })).statusCode, 201);
    });

    it("201: a charge's static code carries its txid and pays the charge", async () => {
      const row = await charge({ valor: { original: '3.21' } });
      const res = await pay({ pixCopiaECola: row.br_code });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual({ ...res.json<object>(), endToEndId: undefined, transactionId: undefined }, { amount: '3.21', txid: row.txid, endToEndId: undefined, transactionId: undefined });
      const paidRow = await chargeRow(row.id);
      assert.equal(paidRow.status, 'CONCLUIDA');
      assert.equal(paidRow.paid_transaction_id, BigInt(res.json<{ transactionId: number }>().transactionId));
    });

    it("201: another institution's key is paid without crediting anything here (transactionId null)", async () => {
      const outside = await externalKey(t);
      const count = async () => (await t.db.selectFrom('transactions').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n;
      const before = await count();
      const code = buildBrCode({ key: outside.key, amountCentavos: 990n, merchantName: 'Fora', merchantCity: 'RIO', txid: 'abc123' });
      const res = await pay({ pixCopiaECola: code });
      assert.equal(res.statusCode, 201, res.body);
      const paid = res.json<{ endToEndId: string; transactionId: null; amount: string; txid: string }>();
      assert.deepEqual({ ...paid, endToEndId: undefined }, { endToEndId: undefined, transactionId: null, amount: '9.90', txid: 'abc123' });
      assert.equal(await count(), before);
    });

    it('422: a key in no directory; BRCODE_INVALID on a bad CRC or structure', async () => {
      const unknown = buildBrCode({ key: 'nobody-here@example.com', amountCentavos: 100n, merchantName: 'X', merchantCity: 'Y' });
      await refused({ pixCopiaECola: unknown }, 'PIX_KEY_NOT_FOUND', /directory/);
      const good = buildBrCode({ key: holderKey, amountCentavos: 100n, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      const badCrc = good.slice(0, -4) + (good.endsWith('0000') ? '1111' : '0000');
      await refused({ pixCopiaECola: badCrc }, 'BRCODE_INVALID', /CRC mismatch/);
      await refused({ pixCopiaECola: 'not a br code at all' }, 'BRCODE_INVALID', /CRC/);
    });
  });

  describe('dynamic codes', () => {
    it('201: fetches the location, verifies its JWS and pays the charge through the core', async () => {
      const row = await charge({ valor: { original: '10.00' } });
      const before = await available(holder.accountId);
      const res = await pay({ pixCopiaECola: row.pix_copia_e_cola, payer: { name: 'Paula Pagadora', document: '52998224725' } });
      assert.equal(res.statusCode, 201, res.body);
      const paid = res.json<{ endToEndId: string; transactionId: number; amount: string; txid: string }>();
      assert.deepEqual([paid.amount, paid.txid], ['10.00', row.txid]);
      assert.equal(await available(holder.accountId), before + 1000n);
      const after = await chargeRow(row.id);
      assert.equal(after.status, 'CONCLUIDA');
      assert.equal(after.paid_transaction_id, BigInt(paid.transactionId));
      const received = await t.db.selectFrom('transactions').selectAll().where('id', '=', BigInt(paid.transactionId)).executeTakeFirstOrThrow();
      assert.deepEqual([received.txid, received.counterpart_document, received.end_to_end_id], [row.txid, '52998224725', paid.endToEndId]);
      assert.ok(seen.some((url) => url.pathname === `/qr/v2/${row.token}`));
      assert.ok(seen.some((url) => url.pathname === '/qr/jwks'));
    });

    it('201: paidAt back-dates the payment; amount is taken where modalidadeAlteracao is 1', async () => {
      const row = await charge({ valor: { original: '10.00', modalidadeAlteracao: 1 } });
      t.clock.advance(60_000);
      const paidAt = new Date(t.clock.now().getTime() - 30_000).toISOString();
      const before = await available(holder.accountId);
      const res = await pay({ pixCopiaECola: row.pix_copia_e_cola, amount: '15.50', paidAt });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json<{ amount: string }>().amount, '15.50');
      assert.equal(await available(holder.accountId), before + 1550n);
      const received = await t.db.selectFrom('transactions').selectAll().where('id', '=', BigInt(res.json<{ transactionId: number }>().transactionId)).executeTakeFirstOrThrow();
      assert.equal(received.created_at.toISOString(), paidAt);
    });

    it('422 CHARGE_NOT_ACTIVE: a charge already paid', async () => {
      const row = await charge();
      assert.equal((await pay({ pixCopiaECola: row.pix_copia_e_cola })).statusCode, 201);
      const before = await available(holder.accountId);
      const res = await pay({ pixCopiaECola: row.pix_copia_e_cola });
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual([res.json<{ code: string }>().code, await available(holder.accountId)], ['CHARGE_NOT_ACTIVE', before]);
      assert.match(res.json<{ message: string }>().message, /CONCLUIDA/);
    });

    it('422 CHARGE_EXPIRED: a cob past calendario.criacao + expiracao (even where its payload still says ATIVA)', async () => {
      const row = await charge({ calendario: { expiracao: 60 } });
      t.clock.advance(61_000);
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'CHARGE_EXPIRED', /expired at/, row);
    });

    it('422 AMOUNT_NOT_ALLOWED: an amount where modalidadeAlteracao is 0', async () => {
      const row = await charge({ valor: { original: '10.00' } });
      await refused({ pixCopiaECola: row.pix_copia_e_cola, amount: '11.00' }, 'AMOUNT_NOT_ALLOWED', /10\.00/, row);
    });

    it('422 CHARGE_EXPIRED: a cobv past dataDeVencimento + validadeAposVencimento, fetched with DPP and codMun', async () => {
      const token = randomBytes(16).toString('hex');
      const now = t.clock.now();
      const payload = {
        calendario: { criacao: new Date(now.getTime() - 40 * 86_400_000).toISOString(), apresentacao: now.toISOString(), dataDeVencimento: '2020-01-06', validadeAposVencimento: 2 },
        txid: txid(),
        revisao: 0,
        status: 'ATIVA',
        valor: { original: '100.00', final: '100.00' },
        chave: holderKey,
        devedor: { cpf: '52998224725', nome: 'Devedor' },
        recebedor: { cnpj: '00000000000191', nome: 'Loja' },
      };
      serve(`/qr/v2/cobv/${token}`, () => signer.signPayload(payload));
      const code = buildDynamicBrCode({ location: `${new URL(origin).host}/qr/v2/cobv/${token}`, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      await refused({ pixCopiaECola: code }, 'CHARGE_EXPIRED', /2020-01-08/);
      const fetched = seen.findLast((url) => url.pathname === `/qr/v2/cobv/${token}`)!;
      assert.match(fetched.searchParams.get('DPP')!, /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(fetched.searchParams.get('codMun'), '3550308');
    });

    it('422 CHARGE_NOT_ACTIVE: a payload whose status is not ATIVA', async () => {
      const row = await charge();
      serve(`/qr/v2/${row.token}`, () => signer.signPayload({ ...cobPayload(row), status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'CHARGE_NOT_ACTIVE', /REMOVIDA_PELO_USUARIO_RECEBEDOR/, row);
    });

    it('422 JWS_INVALID: a tampered payload fails the signature', async () => {
      const row = await charge({ valor: { original: '10.00' } });
      serve(`/qr/v2/${row.token}`, async () => {
        const [head, , signature] = (await signer.signPayload(cobPayload(row))).split('.');
        const altered = Buffer.from(JSON.stringify({ ...cobPayload(row), valor: { original: '0.01' } })).toString('base64url');
        return `${head}.${altered}.${signature}`;
      });
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /signature/, row);
    });

    it("422 JWS_INVALID: x5t or x5t#S256 that is not the JWK certificate's thumbprint", async () => {
      const row = await charge();
      const rootThumbprint = signer.jwkSet.keys[0]!.x5t;
      serve(`/qr/v2/${row.token}`, () => trusted.sign(cobPayload(row), { x5t: rootThumbprint }));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /x5t is not/, row);
      serve(`/qr/v2/${row.token}`, () => trusted.sign(cobPayload(row), { 'x5t#S256': trusted.jwk.x5t }));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /x5t#S256/, row);
      // The same key with correct thumbprints is accepted: what failed was only the thumbprint.
      serve(`/qr/v2/${row.token}`, () => trusted.sign(cobPayload(row)));
      assert.equal((await pay({ pixCopiaECola: row.pix_copia_e_cola })).statusCode, 201);
    });

    it('422 JWS_INVALID: a jku on another host or scheme, fetched never', async () => {
      const row = await charge();
      const port = new URL(origin).port;
      for (const [jku, reason] of [
        [`http://localhost:${port}/crafted/jwks`, /jku is on localhost/],
        [`https://127.0.0.1:${port}/crafted/jwks`, /jku must be an http URL/],
        [`http://127.0.0.1:1/crafted/jwks`, /jku is on 127\.0\.0\.1:1/],
      ] as const) {
        serve(`/qr/v2/${row.token}`, () => trusted.sign(cobPayload(row), { jku }));
        await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', reason, row);
      }
    });

    it('422 JWS_INVALID: a chain up to a root the sandbox does not trust', async () => {
      const row = await charge();
      serve(`/qr/v2/${row.token}`, () => rogue.sign(cobPayload(row)));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /root/, row);
    });

    it('422 JWS_INVALID: alg none, HS256, or one the JWK does not carry; an unknown kid', async () => {
      const row = await charge();
      const payloadPart = Buffer.from(JSON.stringify(cobPayload(row))).toString('base64url');
      const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', kid: trusted.jwk.kid, jku: `${origin}/crafted/jwks`, x5t: trusted.jwk.x5t })).toString('base64url')}.${payloadPart}.`;
      serve(`/qr/v2/${row.token}`, () => unsigned);
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /alg "none" is not allowed/, row);
      const hmac = await new CompactSign(Buffer.from('{}')).setProtectedHeader({ alg: 'HS256', kid: trusted.jwk.kid }).sign(randomBytes(32));
      serve(`/qr/v2/${row.token}`, () => hmac);
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /alg "HS256" is not allowed/, row);
      answers.set('/mismatch/jwks', () => ({ status: 200, body: JSON.stringify({ keys: [{ ...trusted.jwk, alg: 'RS256' }] }) }));
      serve(`/qr/v2/${row.token}`, () => trusted.sign(cobPayload(row), { jku: `${origin}/mismatch/jwks` }));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /alg: the header says PS256, the JWK RS256/, row);
      serve(`/qr/v2/${row.token}`, () => trusted.sign(cobPayload(row), { kid: 'unknown' }));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'JWS_INVALID', /kid/, row);
    });

    it("422 PAYLOAD_INVALID: a signed payload of another charge than the location's", async () => {
      const row = await charge();
      const other = await charge();
      serve(`/qr/v2/${row.token}`, () => signer.signPayload(cobPayload(other)));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'PAYLOAD_INVALID', /location's charge/, row);
    });

    it('422 LOCATION_UNREACHABLE: nothing listening, or a location that answers 404', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const away = buildDynamicBrCode({ location: `127.0.0.1:${port}/qr/v2/${'a'.repeat(32)}`, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      // A private address: refused, timed out or untrusted, told as one.
      await refused({ pixCopiaECola: away }, 'LOCATION_UNREACHABLE', new RegExp(`https://127\\.0\\.0\\.1:${port}/.*unreachable: a private address`));
      const missing = buildDynamicBrCode({ location: `${new URL(origin).host}/qr/v2/${'b'.repeat(32)}`, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      await refused({ pixCopiaECola: missing }, 'LOCATION_UNREACHABLE', /HTTP 404/);
    });
  });

  describe("a location's refusal, read as BCB's problem", () => {
    const problem = (status: number, name: string, detail: string) => () => ({
      status,
      type: 'application/problem+json',
      body: JSON.stringify({ type: `https://pix.bcb.gov.br/api/v2/error/${name}`, title: name, status, detail }),
    });

    it('422 CHARGE_NOT_ACTIVE: 404 CobPayloadNaoEncontrado, or 410, for a charge that is there; LOCATION_UNREACHABLE when none is', async () => {
      const row = await charge();
      answers.set(`/qr/v2/${row.token}`, problem(404, 'CobPayloadNaoEncontrado', 'A cobrança em questão não foi encontrada para a location requisitada.'));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'CHARGE_NOT_ACTIVE', /HTTP 404 CobPayloadNaoEncontrado/, row);
      answers.set(`/qr/v2/${row.token}`, () => ({ status: 410, body: '' }));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'CHARGE_NOT_ACTIVE', /HTTP 410/, row);
      const token = 'c'.repeat(32);
      answers.set(`/qr/v2/${token}`, problem(404, 'CobPayloadNaoEncontrado', 'Nada aqui.'));
      const nowhere = buildDynamicBrCode({ location: `${new URL(origin).host}/qr/v2/${token}`, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      await refused({ pixCopiaECola: nowhere }, 'LOCATION_UNREACHABLE', /serves no charge \(HTTP 404 CobPayloadNaoEncontrado\)/);
    });

    it("422 LOCATION_UNREACHABLE: another refusal, with the problem's detail", async () => {
      const row = await charge();
      answers.set(`/qr/v2/${row.token}`, problem(400, 'CobPayloadOperacaoInvalida', 'codMun não é um código válido.'));
      await refused({ pixCopiaECola: row.pix_copia_e_cola }, 'LOCATION_UNREACHABLE', /HTTP 400 \(CobPayloadOperacaoInvalida: codMun não é um código válido\.\)/, row);
    });
  });

  describe("a recurrence's location (Pix Automático), verified exactly as a charge's", () => {
    /** A recurrence of a company of this service with its location, CRIADA, and its code alone (journey 2). */
    async function recurrence() {
      const company = await createClient(t, { name: 'Academia Forte', document: randomCnpj() });
      const v2 = (method: 'POST' | 'GET', url: string, payload?: object) => t.app.inject({ method, url: `/v2${url}`, headers: company.headers, ...(payload ? { payload } : {}) });
      const loc = (await v2('POST', '/locrec', { tipo: 'rec' })).json<{ id: number; location: string }>();
      const made = await v2('POST', '/rec', {
        vinculo: { contrato: 'CTR-1', devedor: { cpf: randomCpf(), nome: 'Fulano de Tal' } },
        calendario: { dataInicial: new Date(t.clock.now().getTime() + 86_400_000).toISOString().slice(0, 10), periodicidade: 'MENSAL' },
        valor: { valorRec: '50.00' },
        politicaRetentativa: 'NAO_PERMITE',
        loc: loc.id,
      });
      assert.equal(made.statusCode, 201, made.body);
      const idRec = made.json<{ idRec: string }>().idRec;
      const code = (await v2('GET', `/rec/${idRec}`)).json<{ dadosQR: { pixCopiaECola: string } }>().dadosQR.pixCopiaECola;
      const path = `/${loc.location.split('/').slice(1).join('/')}`;
      const status = async () => (await v2('GET', `/rec/${idRec}`)).json<{ status: string }>().status;
      return { code, path, status, served: async () => (await t.app.inject({ method: 'GET', url: path })).body };
    }

    it('422 JWS_INVALID for a tampered payload, a root the sandbox does not trust, an expired certificate: nothing is approved', async () => {
      const rec = await recurrence();
      const genuine = await rec.served();
      const [head, body, signature] = genuine.split('.');
      const payload = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Record<string, unknown>;
      const tampered = `${head}.${Buffer.from(JSON.stringify({ ...payload, valor: { valorRec: '0.01' } })).toString('base64url')}.${signature}`;
      const expired = await craftedKey(trustedRoot, `${origin}/expired/jwks`, new Date(t.clock.now().getTime() - 3 * 366 * 86_400_000));
      answers.set('/expired/jwks', () => ({ status: 200, type: 'application/json', body: JSON.stringify({ keys: [expired.jwk] }) }));
      for (const [jws, reason] of [
        [() => tampered, /signature/],
        [() => rogue.sign(payload), /root/],
        [() => expired.sign(payload), /expired or not yet valid/],
      ] as const) {
        serve(rec.path, jws);
        const res = await pay({ pixCopiaECola: rec.code });
        assert.equal(res.statusCode, 422, res.body);
        assert.equal(res.json<{ code: string }>().code, 'JWS_INVALID', res.body);
        assert.match(res.json<{ message: string }>().message, reason);
        assert.equal(await rec.status(), 'CRIADA', 'nothing approved');
      }
      // The genuine one approves it: what failed was only the JWS.
      serve(rec.path, () => genuine);
      const ok = await pay({ pixCopiaECola: rec.code });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.equal(await rec.status(), 'APROVADA');
    });
  });

  describe('requests', () => {
    it('400 for a paidAt in the future, a bad amount or document; 401 without the admin token', async () => {
      const code = buildBrCode({ key: holderKey, amountCentavos: 100n, merchantName: 'Loja', merchantCity: 'SAO PAULO' });
      const future = new Date(t.clock.now().getTime() + 60_000).toISOString();
      for (const [body, errorCode] of [
        [{ pixCopiaECola: code, paidAt: future }, 'INVALID_PAID_AT'],
        [{ pixCopiaECola: code, amount: '0.00' }, 'INVALID_AMOUNT'],
        [{ pixCopiaECola: code, amount: '1' }, 'VALIDATION_FAILED'],
        [{ pixCopiaECola: code, payer: { name: 'X', document: '12345678900' } }, 'INVALID_DOCUMENT'],
        [{ pixCopiaECola: code, extra: true }, 'VALIDATION_FAILED'],
      ] as const) {
        const res = await pay(body);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json<{ code: string }>().code, errorCode);
      }
      assert.equal((await pay({ pixCopiaECola: code }, {})).statusCode, 401);
      assert.equal((await pay({ pixCopiaECola: code }, holder.headers)).statusCode, 401);
    });
  });
});
