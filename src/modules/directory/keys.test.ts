import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient, externalKey, randomCnpj, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertError } from '../../../test/assertions.ts';
import { INSTITUTION_NAME } from '../accounts/service.ts';

/** GET /dict/keys/{key}: what a payer is shown of a key before paying it. */
describe('GET /dict/keys/{key}', () => {
  let t: TestApp;
  let payer: TestClient;

  const lookUp = (key: string, headers = payer.headers) => t.app.inject({ method: 'GET', url: `/dict/keys/${encodeURIComponent(key)}`, headers });

  before(async () => {
    t = await startTestApp();
    payer = await createClient(t);
  });
  after(() => t.close());

  it("shows a key at another institution: its type, the owner's name, the owner's CPF masked, the institution", async () => {
    const key = `Ana.${randomUUID()}@Example.com`;
    await externalKey(t, { key, name: 'Ana Recebedora', document: '12345678909', ispb: '60746948', bankName: 'Banco Bradesco' });
    const res = await lookUp(key);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      key: key.toLowerCase(),
      type: 'email',
      owner: { name: 'Ana Recebedora', document: '***.456.789-**' },
      institution: { ispb: '60746948', name: 'Banco Bradesco' },
    });
  });

  it('masks a CNPJ as the transaction views do, and reads a phone key from its percent-encoded path', async () => {
    const cnpj = randomCnpj();
    await externalKey(t, { key: cnpj, name: 'Empresa SA', document: cnpj, ispb: '22222222' });
    const res = await lookUp(cnpj);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), {
      key: cnpj,
      type: 'cnpj',
      owner: { name: 'Empresa SA', document: `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/****-**` },
      institution: { ispb: '22222222', name: null },
    });
    const phone = `+55119${String(randomInt(10_000_000, 99_999_999))}`;
    await externalKey(t, { key: phone, ispb: '33333333', bankName: 'Banco Fone' });
    const byPhone = await lookUp(phone);
    assert.equal(byPhone.statusCode, 200, byPhone.body);
    assert.equal(byPhone.json().key, phone);
    assert.equal(byPhone.json().type, 'phone');
  });

  it("shows a key of another account of this institution, with this institution's ISPB and name", async () => {
    const document = randomCpf();
    const holder = await createClient(t, { name: 'Bruno Titular', document });
    const res = await t.app.inject({ method: 'POST', url: `/admin/accounts/${holder.accountId}/pix-keys`, headers: adminHeaders, payload: { type: 'cpf' } });
    assert.equal(res.statusCode, 201, res.body);
    const found = await lookUp(document);
    assert.equal(found.statusCode, 200, found.body);
    assert.deepEqual(found.json(), {
      key: document,
      type: 'cpf',
      owner: { name: 'Bruno Titular', document: `***.${document.slice(3, 6)}.${document.slice(6, 9)}-**` },
      institution: { ispb: t.config.pspIspb, name: INSTITUTION_NAME },
    });
  });

  it('a key not in the directory is 404 PIX_KEY_NOT_FOUND', async () => {
    assertError(await lookUp(`nobody-${randomUUID()}@example.com`), 404, /not found in the directory/, 'PIX_KEY_NOT_FOUND');
    assertError(await lookUp(randomUUID()), 404, undefined, 'PIX_KEY_NOT_FOUND');
  });

  it('a malformed key is 400 INVALID_PIX_KEY', async () => {
    for (const key of ['not a key', '12345678900', '+5511', 'a@b', 'x'.repeat(78), ' ']) {
      assertError(await lookUp(key), 400, /key is not a valid PIX key/, 'INVALID_PIX_KEY');
    }
  });

  it('needs the token and its certificate', async () => {
    assertError(await lookUp(randomUUID(), {}), 401, undefined, 'TOKEN_MISSING');
    assertError(await lookUp(randomUUID(), { authorization: payer.headers.authorization! }), 401, undefined, 'CERTIFICATE_REQUIRED');
  });
});
