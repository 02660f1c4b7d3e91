import assert from 'node:assert/strict';
import { BLOCKED_SHARDS } from '../ledger/service.ts';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createAccount, createClient, evpKey, randomCnpj, randomCpf, requestToken, type TestAccount, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, TEST_ADMIN_TOKEN, type TestApp } from '../../../test/harness.ts';
import { issueCertificate, type IssuedCertificate } from '../../lib/certificate-authority.ts';
import { accountNumberFor, MAX_PIX_KEYS_PER_ACCOUNT } from '../accounts/service.ts';
import { errorMessage } from '../../../test/assertions.ts';

const UNKNOWN_ACCOUNT = 987654321;
const EVP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WRONG_ADMIN_HEADERS: Record<string, string>[] = [
  {},
  { authorization: 'Bearer not-the-admin-token' },
  { authorization: `Bearer ${TEST_ADMIN_TOKEN.toUpperCase()}` },
  { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` },
  { authorization: `Basic ${Buffer.from(`admin:${TEST_ADMIN_TOKEN}`).toString('base64')}` },
  { authorization: TEST_ADMIN_TOKEN },
  { authorization: 'Bearer' },
];


const sha256Hex = (der: ArrayBuffer) => createHash('sha256').update(Buffer.from(der)).digest('hex');

/** "12345678909" -> "123.456.789-09"; a 14-character CNPJ -> "12.ABC.345/01DE-35". */
function punctuate(document: string): string {
  if (document.length === 11) return `${document.slice(0, 3)}.${document.slice(3, 6)}.${document.slice(6, 9)}-${document.slice(9)}`;
  return `${document.slice(0, 2)}.${document.slice(2, 5)}.${document.slice(5, 8)}/${document.slice(8, 12)}-${document.slice(12)}`;
}

function alphanumericCnpj(): string {
  for (;;) {
    const cnpj = randomCnpj(true);
    if (/[A-Z]/.test(cnpj)) return cnpj;
  }
}

describe('operator API (/admin/*)', () => {
  let t: TestApp;
  let a: TestAccount;
  let b: TestAccount;

  const inject = (method: 'POST' | 'DELETE', url: string, payload?: object, headers: Record<string, string> = adminHeaders) =>
    t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

  before(async () => {
    t = await startTestApp();
    [a, b] = await Promise.all([createAccount(t, { name: 'Ana Titular' }), createAccount(t, { name: 'Bruno Outro' })]);
  });
  after(() => t?.close());

  describe('POST /admin/accounts', () => {
    it('201 with the new account and its credentials', async () => {
      const document = randomCpf();
      const res = await inject('POST', '/admin/accounts', { name: '  Carla Nova  ', document });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<Record<string, unknown>>();
      assert.deepEqual(Object.keys(body).sort(), ['accountId', 'accountNumber', 'branch', 'clientId', 'clientSecret']);
      assert.ok(Number.isSafeInteger(body.accountId) && (body.accountId as number) > 0);
      assert.equal(body.branch, '0001');
      assert.equal(body.accountNumber, accountNumberFor(BigInt(body.accountId as number)));
      assert.match(body.accountNumber as string, /^\d{8}-\d$/);
      assert.match(body.clientId as string, /^pix_[a-z0-9]{24}$/);
      assert.equal(typeof body.clientSecret, 'string');
      assert.ok((body.clientSecret as string).length >= 32);

      const row = await t.db.selectFrom('accounts').selectAll().where('id', '=', BigInt(body.accountId as number)).executeTakeFirstOrThrow();
      assert.equal(row.name, 'Carla Nova');
      assert.equal(row.document, document);
      assert.equal(row.document_type, 'CPF');
      assert.equal(row.client_id, body.clientId);
      assert.equal(row.status, 'ACTIVE');
      // Only a slow hash of the secret is kept.
      assert.ok(!row.client_secret_hash.includes(body.clientSecret as string));
      assert.match(row.client_secret_hash, /^scrypt\$/);
      // An available account and the blocked shards, all empty.
      const ledger = await t.db
        .selectFrom('ledger_accounts')
        .select(['code', 'shard', 'balance'])
        .where('account_id', '=', row.id)
        .orderBy('code')
        .orderBy('shard')
        .execute();
      assert.deepEqual(ledger, [
        { code: 'available', shard: 0, balance: 0n },
        ...Array.from({ length: BLOCKED_SHARDS }, (_, shard) => ({ code: 'blocked', shard, balance: 0n })),
      ]);
    });

    it('accepts a punctuated CPF and stores its digits', async () => {
      const cpf = randomCpf();
      const res = await inject('POST', '/admin/accounts', { name: 'Pontuada', document: punctuate(cpf) });
      assert.equal(res.statusCode, 201, res.body);
      const row = await t.db.selectFrom('accounts').select(['document', 'document_type']).where('id', '=', BigInt(res.json().accountId)).executeTakeFirstOrThrow();
      assert.deepEqual(row, { document: cpf, document_type: 'CPF' });
    });

    it('accepts an alphanumeric CNPJ, punctuated and in lower case', async () => {
      const cnpj = alphanumericCnpj();
      const res = await inject('POST', '/admin/accounts', { name: 'Empresa Alfa Ltda', document: punctuate(cnpj).toLowerCase() });
      assert.equal(res.statusCode, 201, res.body);
      const row = await t.db.selectFrom('accounts').select(['document', 'document_type']).where('id', '=', BigInt(res.json().accountId)).executeTakeFirstOrThrow();
      assert.deepEqual(row, { document: cnpj, document_type: 'CNPJ' });
    });

    it('400 naming the field for missing, blank, mistyped or unknown fields', async () => {
      const cpf = randomCpf();
      const cases: [object, RegExp][] = [
        [{ document: cpf }, /\bname\b/],
        [{ name: '', document: cpf }, /\bname\b/],
        [{ name: '   ', document: cpf }, /\bname\b/],
        [{ name: 'x'.repeat(141), document: cpf }, /\bname\b/],
        [{ name: 42, document: cpf }, /\bname\b/],
        [{ name: 'Sem Documento' }, /\bdocument\b/],
        [{ name: 'Numero', document: Number(cpf) }, /\bdocument\b/],
        [{ name: 'Extra', document: cpf, email: 'a@b.com' }, /\bemail\b/],
      ];
      for (const [payload, field] of cases) {
        const res = await inject('POST', '/admin/accounts', payload);
        assert.match(errorMessage(res, 400), field, JSON.stringify(payload));
      }
    });

    it('400 for a document with wrong check digits or of no known shape', async () => {
      const cpf = randomCpf();
      const badCpf = cpf.slice(0, 10) + String((Number(cpf[10]) + 1) % 10);
      const cnpj = randomCnpj();
      const badCnpj = cnpj.slice(0, 13) + String((Number(cnpj[13]) + 1) % 10);
      for (const document of [badCpf, punctuate(badCpf), badCnpj, '11111111111', '1234567890', 'ABCDEFGHIJKLMN']) {
        const res = await inject('POST', '/admin/accounts', { name: 'Digitos Errados', document });
        assert.match(errorMessage(res, 400), /\bdocument\b/, document);
      }
      const count = await t.db.selectFrom('accounts').select((eb) => eb.fn.countAll<bigint>().as('n')).where('name', '=', 'Digitos Errados').executeTakeFirstOrThrow();
      assert.equal(count.n, 0n);
    });
  });

  describe('POST /admin/accounts/{accountId}/certificates', () => {
    let cert: IssuedCertificate;
    before(async () => {
      cert = await issueCertificate({ commonName: 'admin-test-a' });
    });

    it('201 with the SHA-256 of the DER; linking it again to the same account is 201 too', async () => {
      const expected = sha256Hex(cert.cert.rawData);
      for (let i = 0; i < 2; i++) {
        const res = await inject('POST', `/admin/accounts/${a.accountId}/certificates`, { pem: cert.certPem });
        assert.equal(res.statusCode, 201, res.body);
        assert.deepEqual(res.json(), { fingerprint: expected });
        assert.match(res.json().fingerprint, /^[0-9a-f]{64}$/);
      }
      const rows = await t.db.selectFrom('account_certificates').select(['account_id', 'fingerprint']).where('fingerprint', '=', expected).execute();
      assert.deepEqual(rows, [{ account_id: BigInt(a.accountId), fingerprint: expected }]);
    });

    it('409 when the certificate is linked to another account, which keeps it', async () => {
      const res = await inject('POST', `/admin/accounts/${b.accountId}/certificates`, { pem: cert.certPem });
      assert.match(errorMessage(res, 409), /another account/);
      const row = await t.db.selectFrom('account_certificates').select('account_id').where('fingerprint', '=', sha256Hex(cert.cert.rawData)).executeTakeFirstOrThrow();
      assert.equal(row.account_id, BigInt(a.accountId));
    });

    it('400 naming pem for text that is not one certificate', async () => {
      const other = await issueCertificate({ commonName: 'admin-test-two' });
      const garbled = cert.certPem.replace(/(-----\n)(.{20})/, '$1AAAAAAAAAAAAAAAAAAAA');
      for (const pem of ['hello', cert.keyPem, garbled, cert.certPem + other.certPem, '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n']) {
        const res = await inject('POST', `/admin/accounts/${a.accountId}/certificates`, { pem });
        assert.match(errorMessage(res, 400), /\bpem\b/);
      }
      for (const payload of [{}, { pem: '' }, { pem: 1 }]) {
        const res = await inject('POST', `/admin/accounts/${a.accountId}/certificates`, payload);
        assert.match(errorMessage(res, 400), /\bpem\b/, JSON.stringify(payload));
      }
      const extra = await inject('POST', `/admin/accounts/${a.accountId}/certificates`, { pem: other.certPem, account: 1 });
      assert.match(errorMessage(extra, 400), /\baccount\b/);
      const linked = await t.db.selectFrom('account_certificates').select('id').where('fingerprint', '=', sha256Hex(other.cert.rawData)).execute();
      assert.equal(linked.length, 0);
    });

    it('400 INVALID_CERTIFICATE for a certificate expired, or not yet valid, by the service clock; nothing is linked', async () => {
      const now = t.clock.now().getTime();
      const day = 86_400_000;
      const cases: [{ notBefore: Date; notAfter: Date }, RegExp][] = [
        [{ notBefore: new Date(now - 30 * day), notAfter: new Date(now - 1_000) }, /expired at/],
        [{ notBefore: new Date(now + 60_000), notAfter: new Date(now + 30 * day) }, /not valid before/],
      ];
      for (const [validity, message] of cases) {
        const outside = await issueCertificate({ commonName: 'outside-validity', ...validity });
        const res = await inject('POST', `/admin/accounts/${a.accountId}/certificates`, { pem: outside.certPem });
        assert.match(errorMessage(res, 400, 'INVALID_CERTIFICATE'), message);
        const linked = await t.db.selectFrom('account_certificates').select('id').where('fingerprint', '=', sha256Hex(outside.cert.rawData)).execute();
        assert.equal(linked.length, 0);
      }
      // The service's clock decides: the same kind of certificate links once its time has come.
      const early = await issueCertificate({ commonName: 'early', notBefore: new Date(now + 60_000), notAfter: new Date(now + day) });
      t.clock.advance(60_000);
      try {
        assert.equal((await inject('POST', `/admin/accounts/${a.accountId}/certificates`, { pem: early.certPem })).statusCode, 201);
      } finally {
        t.clock.advance(-60_000);
      }
    });
  });

  describe('DELETE /admin/accounts/{accountId}/certificates/{fingerprint}', () => {
    it('204 with no body; tokens bound to the certificate stop working', async () => {
      const client = await createClient(t);
      const before = await t.app.inject({ method: 'GET', url: '/balance', headers: client.headers });
      assert.equal(before.statusCode, 200);

      const res = await inject('DELETE', `/admin/accounts/${client.accountId}/certificates/${client.cert.fingerprint}`);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      const rows = await t.db.selectFrom('account_certificates').select('id').where('fingerprint', '=', client.cert.fingerprint).execute();
      assert.equal(rows.length, 0);

      for (const headers of [client.headers, { authorization: client.headers.authorization! }]) {
        const after = await t.app.inject({ method: 'GET', url: '/balance', headers });
        errorMessage(after, 401);
      }
      // A second unlink finds nothing.
      const again = await inject('DELETE', `/admin/accounts/${client.accountId}/certificates/${client.cert.fingerprint}`);
      errorMessage(again, 404);
    });

    it('accepts the fingerprint in upper case', async () => {
      const cert = await issueCertificate({ commonName: 'upper-case' });
      const linked = await inject('POST', `/admin/accounts/${b.accountId}/certificates`, { pem: cert.certPem });
      const fingerprint = linked.json<{ fingerprint: string }>().fingerprint;
      const res = await inject('DELETE', `/admin/accounts/${b.accountId}/certificates/${fingerprint.toUpperCase()}`);
      assert.equal(res.statusCode, 204);
      assert.equal((await t.db.selectFrom('account_certificates').select('id').where('fingerprint', '=', fingerprint).execute()).length, 0);
    });

    it("404 for another account's certificate, which stays linked", async () => {
      const cert = await issueCertificate({ commonName: 'belongs-to-b' });
      const fingerprint = (await inject('POST', `/admin/accounts/${b.accountId}/certificates`, { pem: cert.certPem })).json().fingerprint;
      const res = await inject('DELETE', `/admin/accounts/${a.accountId}/certificates/${fingerprint}`);
      errorMessage(res, 404);
      const row = await t.db.selectFrom('account_certificates').select('account_id').where('fingerprint', '=', fingerprint).executeTakeFirstOrThrow();
      assert.equal(row.account_id, BigInt(b.accountId));
    });

    it('400 naming fingerprint when it is not 64 hex characters', async () => {
      for (const fingerprint of ['abc', 'g'.repeat(64), 'a'.repeat(65)]) {
        const res = await inject('DELETE', `/admin/accounts/${a.accountId}/certificates/${fingerprint}`);
        assert.match(errorMessage(res, 400), /\bfingerprint\b/, fingerprint);
      }
    });
  });

  describe('POST /admin/accounts/{accountId}/pix-keys', () => {
    let cnpjHolder: TestAccount;
    before(async () => {
      cnpjHolder = await createAccount(t, { name: 'Empresa Chave', document: alphanumericCnpj() });
    });

    async function dictRow(key: string) {
      return t.db.selectFrom('dict_keys').selectAll().where('key', '=', key).executeTakeFirst();
    }

    it('201 for an evp, generated by the directory and pointing to the account', async () => {
      const res = await inject('POST', `/admin/accounts/${a.accountId}/pix-keys`, { type: 'evp' });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<{ key: string; type: string }>();
      assert.deepEqual(Object.keys(body).sort(), ['key', 'type']);
      assert.equal(body.type, 'evp');
      assert.match(body.key, EVP);
      const row = await dictRow(body.key);
      assert.ok(row);
      assert.equal(row.account_id, BigInt(a.accountId));
      assert.equal(row.key_type, 'EVP');
      assert.equal(row.owner_name, 'Ana Titular');
      assert.equal(row.owner_document, a.document);
      assert.equal(row.ispb, t.config.pspIspb);
      assert.equal(row.branch, a.branch);
      assert.equal(row.account_number, a.accountNumber);
      assert.equal(row.behavior, null);
    });

    it('201 for email (normalized), phone and the holder document', async () => {
      const cases: [object, { key: string; type: string }, TestAccount][] = [
        [{ type: 'email', key: ' Ana.Titular+pix@Example.COM ' }, { key: 'ana.titular+pix@example.com', type: 'email' }, a],
        [{ type: 'phone', key: '+5511987654321' }, { key: '+5511987654321', type: 'phone' }, a],
        [{ type: 'cpf', key: punctuate(a.document) }, { key: a.document, type: 'cpf' }, a],
        [{ type: 'cnpj' }, { key: cnpjHolder.document, type: 'cnpj' }, cnpjHolder],
      ];
      for (const [payload, expected, owner] of cases) {
        const res = await inject('POST', `/admin/accounts/${owner.accountId}/pix-keys`, payload);
        assert.equal(res.statusCode, 201, res.body);
        assert.deepEqual(res.json(), expected);
        const row = await dictRow(expected.key);
        assert.equal(row?.account_id, BigInt(owner.accountId));
        assert.equal(row?.key_type, expected.type.toUpperCase());
      }
    });

    it('cpf without a key registers the holder CPF', async () => {
      const res = await inject('POST', `/admin/accounts/${b.accountId}/pix-keys`, { type: 'cpf' });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(res.json(), { key: b.document, type: 'cpf' });
      assert.equal((await dictRow(b.document))?.account_id, BigInt(b.accountId));
    });

    it('400 naming the field for a bad type or a bad key', async () => {
      const cases: [TestAccount, object, RegExp][] = [
        [a, { type: 'iban', key: 'x' }, /\btype\b/],
        [a, { type: 'EVP' }, /\btype\b/],
        [a, { key: 'ana@example.com' }, /\btype\b/],
        [a, { type: 'evp', key: '2f1c6a4e-9b0d-4c53-8a51-6d1f3b1e2a7c' }, /\bkey\b/],
        [a, { type: 'email' }, /\bkey\b/],
        [a, { type: 'email', key: 'not-an-email' }, /\bkey\b/],
        [a, { type: 'email', key: 'ana@' }, /\bkey\b/],
        [a, { type: 'email', key: 'ana @example.com' }, /\bkey\b/],
        [a, { type: 'phone', key: '+14155550123' }, /\bkey\b/],
        [a, { type: 'phone', key: '11987654321' }, /\bkey\b/],
        [a, { type: 'phone', key: '+55 11 98765-4321' }, /\bkey\b/],
        [a, { type: 'cpf', key: randomCpf() }, /\bkey\b/],
        [a, { type: 'cnpj' }, /\bkey\b/],
        [cnpjHolder, { type: 'cpf' }, /\bkey\b/],
        [cnpjHolder, { type: 'cnpj', key: randomCnpj() }, /\bkey\b/],
        [a, { type: 'email', key: `${'a'.repeat(70)}@example.com` }, /\bkey\b/],
        [a, { type: 'phone', key: '+5511987654322', account: 1 }, /\baccount\b/],
      ];
      for (const [owner, payload, field] of cases) {
        const res = await inject('POST', `/admin/accounts/${owner.accountId}/pix-keys`, payload);
        assert.match(errorMessage(res, 400), field, JSON.stringify(payload));
      }
      assert.equal(await dictRow('+5511987654322'), undefined);
    });

    it('409 for a key already registered by the same or another account; the first owner keeps it', async () => {
      const key = 'dup@example.com';
      assert.equal((await inject('POST', `/admin/accounts/${a.accountId}/pix-keys`, { type: 'email', key })).statusCode, 201);
      for (const [owner, spelled] of [
        [a, key],
        [b, key],
        [b, 'DUP@Example.com'],
      ] as const) {
        const res = await inject('POST', `/admin/accounts/${owner.accountId}/pix-keys`, { type: 'email', key: spelled });
        assert.match(errorMessage(res, 409), /already registered/);
      }
      const rows = await t.db.selectFrom('dict_keys').select('account_id').where('key', '=', key).execute();
      assert.deepEqual(rows, [{ account_id: BigInt(a.accountId) }]);
    });

    it(`422 past ${MAX_PIX_KEYS_PER_ACCOUNT} keys per account, even for concurrent requests`, async () => {
      const holder = await createAccount(t, { name: 'Muitas Chaves' });
      const url = `/admin/accounts/${holder.accountId}/pix-keys`;
      const results = await Promise.all(Array.from({ length: MAX_PIX_KEYS_PER_ACCOUNT + 5 }, () => inject('POST', url, { type: 'evp' })));
      assert.deepEqual(
        results.map((r) => r.statusCode).sort(),
        [...Array<number>(MAX_PIX_KEYS_PER_ACCOUNT).fill(201), ...Array<number>(5).fill(422)],
      );
      const next = await inject('POST', url, { type: 'email', key: 'one-too-many@example.com' });
      assert.match(errorMessage(next, 422), new RegExp(`\\b${MAX_PIX_KEYS_PER_ACCOUNT}\\b`));
      const count = await t.db
        .selectFrom('dict_keys')
        .select((eb) => eb.fn.countAll<bigint>().as('n'))
        .where('account_id', '=', BigInt(holder.accountId))
        .executeTakeFirstOrThrow();
      assert.equal(count.n, BigInt(MAX_PIX_KEYS_PER_ACCOUNT));
    });
  });

  describe("the holder's address: POST and PATCH /admin/accounts, and the recebedor of BCB's cobv", () => {
    const ADDRESS = { logradouro: 'Rua Augusta, 1500', cidade: 'São Paulo', uf: 'sp', cep: '01304-001' };
    const patch = (id: number, payload: object) => t.app.inject({ method: 'PATCH', url: `/admin/accounts/${id}`, headers: adminHeaders, payload });
    const cobvRecebedor = async (client: TestClient, txid: string) => {
      const key = await evpKey(t, client.accountId);
      const due = new Date(t.clock.now().getTime() + 10 * 86_400_000).toISOString().slice(0, 10);
      const res = await t.app.inject({
        method: 'PUT',
        url: `/v2/cobv/${txid}`,
        headers: client.headers,
        payload: { calendario: { dataDeVencimento: due }, devedor: { cpf: randomCpf(), nome: 'Devedor' }, valor: { original: '10.00' }, chave: key },
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json<{ recebedor: Record<string, string> }>().recebedor;
    };

    it('given at creation, and kept normalized', async () => {
      const created = await inject('POST', '/admin/accounts', { name: 'Loja Com Endereco', document: randomCpf(), address: ADDRESS });
      assert.equal(created.statusCode, 201, created.body);
      const { accountId } = created.json<{ accountId: number }>();
      const settings = await patch(accountId, {});
      assert.equal(settings.statusCode, 200, settings.body);
      assert.deepEqual(settings.json<{ address: unknown }>().address, { logradouro: 'Rua Augusta, 1500', cidade: 'São Paulo', uf: 'SP', cep: '01304001' });
    });

    it('changed by PATCH (the scopes left as they are), and the cobv made after carries it', async () => {
      const client = await createClient(t);
      const before = await cobvRecebedor(client, 'enderecoantes00000000000000001');
      assert.equal(before.logradouro, 'Não informado', 'an account without an address: BCB still needs one');
      await patch(client.accountId, { scopes: ['cobv.read', 'cobv.write'] });
      const changed = await patch(client.accountId, { address: { logradouro: 'Av. Paulista, 1000', cidade: 'São Paulo', uf: 'SP', cep: '01310100' } });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.deepEqual(changed.json(), {
        accountId: client.accountId,
        clientId: client.clientId,
        scopes: ['cobv.write', 'cobv.read'],
        address: { logradouro: 'Av. Paulista, 1000', cidade: 'São Paulo', uf: 'SP', cep: '01310100' },
      });
      const after = await cobvRecebedor({ ...client, headers: { ...client.headers, authorization: `Bearer ${await requestToken(t, client, client.cert)}` } }, 'enderecodepois0000000000000001');
      assert.deepEqual([after.logradouro, after.cidade, after.uf, after.cep], ['Av. Paulista, 1000', 'São Paulo', 'SP', '01310100']);
      await patch(client.accountId, { scopes: null });
    });

    it('refuses an address BCB would not take, each part named, and changes nothing', async () => {
      const client = await createClient(t);
      for (const [wrong, part] of [
        [{ ...ADDRESS, uf: 'XX' }, 'uf'],
        [{ ...ADDRESS, cep: '0130400' }, 'cep'],
        [{ ...ADDRESS, logradouro: '   ' }, 'logradouro'],
        [{ ...ADDRESS, cidade: 'x'.repeat(201) }, 'cidade'],
        [{ logradouro: 'Rua A', cidade: 'Recife', uf: 'PE' }, 'cep'],
      ] as const) {
        const res = await patch(client.accountId, { address: wrong });
        assert.equal(res.statusCode, 400, `${part}: ${res.body}`);
        assert.match(res.body, new RegExp(part));
      }
      assert.equal((await patch(client.accountId, {})).json<{ address: unknown }>().address, null);
      assert.equal((await patch(999_999_999, { address: ADDRESS })).statusCode, 404);
    });
  });

  describe('POST /admin/accounts/{accountId}/client-secret', () => {
    it('201 with the client id and a new secret; the old secret stops working', async () => {
      const client = await createClient(t);
      const res = await inject('POST', `/admin/accounts/${client.accountId}/client-secret`);
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<{ clientId: string; clientSecret: string }>();
      assert.deepEqual(Object.keys(body).sort(), ['clientId', 'clientSecret']);
      assert.equal(body.clientId, client.clientId);
      assert.equal(typeof body.clientSecret, 'string');
      assert.notEqual(body.clientSecret, client.clientSecret);

      const old = await t.app.inject({
        method: 'POST',
        url: '/api/auth/token',
        headers: { 'x-ssl-client-cert': client.cert.header },
        payload: { clientId: client.clientId, clientSecret: client.clientSecret },
      });
      errorMessage(old, 401);
      const token = await requestToken(t, { ...client, clientSecret: body.clientSecret }, client.cert);
      assert.equal(typeof token, 'string');
    });
  });

  describe('every route', () => {
    const routes: [method: 'POST' | 'DELETE', path: (id: string) => string, payload?: object][] = [
      ['POST', () => '/admin/accounts', { name: 'Nunca Criada', document: '123.456.789-09' }],
      ['POST', (id) => `/admin/accounts/${id}/certificates`, { pem: 'PEM' }],
      ['DELETE', (id) => `/admin/accounts/${id}/certificates/${'a'.repeat(64)}`],
      ['POST', (id) => `/admin/accounts/${id}/pix-keys`, { type: 'evp' }],
      ['POST', (id) => `/admin/accounts/${id}/client-secret`],
    ];

    it('401 without the admin token or with a wrong one, before anything else', async () => {
      const accountsBefore = await t.db.selectFrom('accounts').select('id').execute();
      for (const [method, path, payload] of routes) {
        for (const headers of WRONG_ADMIN_HEADERS) {
          const res = await inject(method, path(String(a.accountId)), payload, headers);
          assert.match(errorMessage(res, 401), /admin/, `${method} ${path('x')} ${JSON.stringify(headers)}`);
          // Even a path that would fail validation answers 401 first.
          errorMessage(await inject(method, path('abc'), payload, headers), 401);
        }
      }
      assert.equal((await t.db.selectFrom('accounts').select('id').execute()).length, accountsBefore.length);
    });

    it('400 naming accountId when it is not a positive integer', async () => {
      for (const [method, path, payload] of routes.slice(1)) {
        for (const id of ['abc', '0', '-1', '1.5', '1e3', '9'.repeat(19)]) {
          const res = await inject(method, path(id), payload);
          assert.match(errorMessage(res, 400), /\baccountId\b/, `${method} ${path(id)}`);
        }
      }
    });

    it('404 for an unknown account', async () => {
      const cert = await issueCertificate({ commonName: 'nobody' });
      const valid: Record<string, object> = { certificates: { pem: cert.certPem }, 'pix-keys': { type: 'evp' } };
      for (const [method, path] of routes.slice(1)) {
        const url = path(String(UNKNOWN_ACCOUNT));
        const segment = url.split('/')[4]!;
        const res = await inject(method, url, valid[segment]);
        assert.match(errorMessage(res, 404), /not found|not linked/i, url);
      }
      // Each with an otherwise valid request, so nothing was written.
      assert.equal((await t.db.selectFrom('account_certificates').select('id').where('account_id', '=', BigInt(UNKNOWN_ACCOUNT)).execute()).length, 0);
      assert.equal((await t.db.selectFrom('dict_keys').select('key').where('account_id', '=', BigInt(UNKNOWN_ACCOUNT)).execute()).length, 0);
    });
  });
});
