import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import { assertError, errorMessage } from '../../../test/assertions.ts';
import { createClient, randomCnpj, randomCpf, type TestClient } from '../../../test/factories.ts';
import { adminHeaders, onPostgres, startTestApp, type TestApp } from '../../../test/harness.ts';
import { assertLedgerInvariants } from '../../../test/ledger.ts';
import { masked, onlyEvent, outboxOf, receivePayload } from '../../../test/events.ts';
import type { Charge } from '../../../scripts/lib/api-types.ts';
import { randomAlphanumeric } from '../../lib/ids.ts';
import { numberToCentavos } from '../../lib/money.ts';
import { SANDBOX_PAYER_ISPB } from '../sandbox/service.ts';
import { SANDBOX_PAYER_CPF } from './routes/sandbox-pay.ts';
import { MERCHANT_CITY } from './service.ts';

type Json = Record<string, unknown>;
interface Movement {
  endToEndId: string;
  transactionId: number;
}

const CHARGE_KEYS = ['calendario', 'chave', 'loc', 'location', 'pixCopiaECola', 'revisao', 'status', 'txid', 'valor'];
const ACCOUNT_NAME = 'João Açaí Comércio de Frutas Ltda';
const txid = () => randomAlphanumeric(32);
const BODY = { calendario: { expiracao: 3600 }, valor: { original: '10.00' } };

/** The BR Code read by an independent library (pix-utils): valid, and a static (key-carrying) code. */
function readPix(payload: string) {
  const pix = parsePix(payload);
  assert.ok(!hasError(pix), hasError(pix) ? pix.message : '');
  assert.ok(isStaticPix(pix), 'a key-carrying code is static for pix-utils');
  return pix;
}

/** A valid CPF with its last check digit changed. */
function badCheckDigit(cpf: string): string {
  return cpf.slice(0, 10) + String((Number(cpf[10]) + 1) % 10);
}

describe('charges (cob)', () => {
  let t: TestApp;
  let holder: TestClient;
  let holderKey: string;
  let holderEvp: string;
  let other: TestClient;
  let otherKey: string;

  const put = (id: string, body: unknown, client: TestClient = holder) =>
    t.app.inject({ method: 'PUT', url: `/cob/${id}`, headers: client.headers, payload: body as Json });
  const get = (url: string, client: TestClient = holder) => t.app.inject({ method: 'GET', url, headers: client.headers });
  const patch = (id: string, body: unknown, client: TestClient = holder) =>
    t.app.inject({ method: 'PATCH', url: `/cob/${id}`, headers: client.headers, payload: body as Json });
  const pay = (id: string, body?: unknown) =>
    t.app.inject({ method: 'POST', url: `/sandbox/cob/${id}/pay`, headers: adminHeaders, ...(body === undefined ? {} : { payload: body as Json }) });
  const incoming = (body: Json) => t.app.inject({ method: 'POST', url: '/sandbox/pix/incoming', headers: adminHeaders, payload: body });

  async function addKey(client: TestClient, body: Json): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: `/admin/accounts/${client.accountId}/pix-keys`, headers: adminHeaders, payload: body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<{ key: string }>().key;
  }

  async function create(body: Json = BODY, client: TestClient = holder): Promise<Charge> {
    const res = await put(txid(), body, client);
    assert.equal(res.statusCode, 201, res.body);
    return res.json<Charge>();
  }

  async function read(id: string, client: TestClient = holder): Promise<Charge> {
    const res = await get(`/cob/${id}`, client);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Charge>();
  }

  async function available(client: TestClient): Promise<number> {
    const res = await get('/accounts/balances', client);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<{ data: { balanceAmount: { available: number } }[] }>().data[0]!.balanceAmount.available;
  }

  before(async () => {
    t = await startTestApp();
    holder = await createClient(t, { name: ACCOUNT_NAME });
    holderKey = await addKey(holder, { type: 'email', key: `cobrador-${randomUUID()}@example.com` });
    t.clock.advance(1000);
    holderEvp = await addKey(holder, { type: 'evp' });
    other = await createClient(t, { name: 'Outra Conta' });
    otherKey = await addKey(other, { type: 'evp' });
  });
  after(() => t?.close());

  describe('authentication', () => {
    const id = 'A'.repeat(30);
    const routes = [
      ['PUT', `/cob/${id}`],
      ['POST', '/cob'],
      ['GET', `/cob/${id}`],
      ['GET', '/cob?inicio=2026-01-01T00:00:00Z&fim=2026-01-02T00:00:00Z'],
      ['PATCH', `/cob/${id}`],
      ['GET', `/cob/${id}/qrcode`],
    ] as const;
    for (const [method, url] of routes) {
      it(`${method} ${url.split('?')[0]}: 401 without a token, or with the admin token`, async () => {
        for (const headers of [{}, adminHeaders]) {
          assertError(await t.app.inject({ method, url, headers, ...(method === 'GET' ? {} : { payload: BODY }) }), 401);
        }
      });
    }
    it('POST /sandbox/cob/{txid}/pay: 401 with an account token', async () => {
      assertError(await t.app.inject({ method: 'POST', url: `/sandbox/cob/${id}/pay`, headers: holder.headers }), 401);
    });
  });

  describe('PUT /cob/{txid}', () => {
    it('201 with exactly the charge fields: defaults, the oldest key, revisao 0, ATIVA', async () => {
      const id = txid();
      const res = await put(id, { calendario: {}, valor: { original: '10.00' } });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<Charge>();
      assert.deepEqual(Object.keys(body).sort(), CHARGE_KEYS);
      const row = await t.db.selectFrom('charges').select(['id', 'br_code']).where('txid', '=', id).executeTakeFirstOrThrow();
      assert.deepEqual(body, {
        calendario: { criacao: t.clock.now().toISOString(), expiracao: 86400 },
        txid: id,
        revisao: 0,
        loc: { id: Number(row.id), location: row.br_code, tipoCob: 'cob' },
        location: row.br_code,
        status: 'ATIVA',
        valor: { original: '10.00', modalidadeAlteracao: 0 },
        chave: holderKey,
        pixCopiaECola: row.br_code,
      });
      assert.match(body.calendario.criacao, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.deepEqual(await read(id), body);
    });

    it('201 with every optional field, echoed exactly', async () => {
      const id = txid();
      const cpf = randomCpf();
      const request = {
        calendario: { expiracao: 120 },
        devedor: { cpf, nome: 'Francisco da Silva' },
        valor: { original: '1234.56', modalidadeAlteracao: 1 },
        chave: holderEvp,
        solicitacaoPagador: 'Serviço realizado.',
        infoAdicionais: [
          { nome: 'Campo 1', valor: 'Informação Adicional1 do PSP-Recebedor' },
          { nome: 'Campo 2', valor: 'x' },
        ],
      };
      const res = await put(id, request);
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<Charge>();
      assert.deepEqual(Object.keys(body).sort(), [...CHARGE_KEYS, 'devedor', 'infoAdicionais', 'solicitacaoPagador'].sort());
      assert.deepEqual(body.calendario.expiracao, 120);
      assert.deepEqual(body.devedor, { cpf, nome: 'Francisco da Silva' });
      assert.deepEqual(body.valor, { original: '1234.56', modalidadeAlteracao: 1 });
      assert.equal(body.chave, holderEvp);
      assert.equal(body.solicitacaoPagador, 'Serviço realizado.');
      assert.deepEqual(body.infoAdicionais, request.infoAdicionais);
      assert.deepEqual(await read(id), body);
    });

    it('201 for a CNPJ debtor, numeric and alphanumeric, and a key written in other case', async () => {
      for (const cnpj of [randomCnpj(), randomCnpj(true)]) {
        const charge = await create({ ...BODY, devedor: { cnpj, nome: 'Empresa Devedora' }, chave: holderKey.toUpperCase() });
        assert.deepEqual(charge.devedor, { cnpj, nome: 'Empresa Devedora' });
        assert.equal(charge.chave, holderKey);
      }
    });

    it('400 for a txid of the wrong shape', async () => {
      for (const id of ['a'.repeat(25), 'a'.repeat(36), `${'a'.repeat(29)}-`, `${'a'.repeat(29)}_`, `${'a'.repeat(29)}%C3%A9`, `${'a'.repeat(29)}%20`]) {
        assert.match(errorMessage(await put(id, BODY), 400), /txid/, id);
      }
    });

    it('400 for every invalid field, with a message naming it; nothing is stored', async () => {
      const cpf = randomCpf();
      const nome = 'Devedor';
      const cases: [unknown, RegExp][] = [
        [{ ...BODY, devedor: { cpf: cpf.slice(0, 10), nome } }, /devedor\.cpf/],
        [{ ...BODY, devedor: { cpf: `${cpf}0`, nome } }, /devedor\.cpf/],
        [{ ...BODY, devedor: { cpf: `${cpf.slice(0, 10)}A`, nome } }, /devedor\.cpf/],
        [{ ...BODY, devedor: { cpf: `${cpf.slice(0, 3)}.${cpf.slice(3, 6)}.${cpf.slice(6, 9)}-${cpf.slice(9)}`, nome } }, /devedor\.cpf/],
        [{ ...BODY, devedor: { cpf: badCheckDigit(cpf), nome } }, /devedor\.cpf must be a valid CPF/],
        [{ ...BODY, devedor: { cpf: '11111111111', nome } }, /devedor\.cpf must be a valid CPF/],
        [{ ...BODY, devedor: { cpf: Number(cpf), nome } }, /devedor\.cpf/],
        [{ ...BODY, devedor: { cnpj: randomCnpj().replace(/.$/, (d) => String((Number(d) + 1) % 10)), nome } }, /devedor\.cnpj must be a valid CNPJ/],
        [{ ...BODY, devedor: { cnpj: '1234567800019', nome } }, /devedor\.cnpj/],
        [{ ...BODY, devedor: { cnpj: randomCnpj(true).toLowerCase().replace(/^\d/, 'a'), nome } }, /devedor\.cnpj/],
        [{ ...BODY, devedor: { cpf, cnpj: randomCnpj(), nome } }, /either cpf or cnpj/],
        [{ ...BODY, devedor: { nome } }, /devedor\.cpf or devedor\.cnpj is required/],
        [{ ...BODY, devedor: { cpf } }, /devedor\.nome is required/],
        [{ ...BODY, devedor: { cpf, nome: '' } }, /devedor\.nome/],
        [{ ...BODY, devedor: { cpf, nome: '   ' } }, /devedor\.nome/],
        [{ ...BODY, devedor: { cpf, nome: 'x'.repeat(201) } }, /devedor\.nome/],
        [{ ...BODY, devedor: { cpf, nome, email: 'a@b.c' } }, /email is not an allowed property/],
        [{ ...BODY, valor: { original: 10 } }, /valor\.original must be string/],
        [{ ...BODY, valor: { original: 10.5 } }, /valor\.original/],
        [{ ...BODY, valor: { original: '10.0' } }, /valor\.original/],
        [{ ...BODY, valor: { original: '10.000' } }, /valor\.original/],
        [{ ...BODY, valor: { original: '10' } }, /valor\.original/],
        [{ ...BODY, valor: { original: '0.00' } }, /valor\.original must be greater than 0/],
        [{ ...BODY, valor: { original: '-1.00' } }, /valor\.original/],
        [{ ...BODY, valor: { original: '01.00' } }, /valor\.original/],
        [{ ...BODY, valor: { original: '1,00' } }, /valor\.original/],
        [{ ...BODY, valor: { original: '12345678901.00' } }, /valor\.original/],
        [{ ...BODY, valor: { original: '١٠.٠٠' } }, /valor\.original/],
        [{ ...BODY, valor: {} }, /valor\.original is required/],
        [{ ...BODY, valor: { original: '1.00', modalidadeAlteracao: 2 } }, /valor\.modalidadeAlteracao/],
        [{ ...BODY, valor: { original: '1.00', modalidadeAlteracao: '1' } }, /valor\.modalidadeAlteracao/],
        [{ calendario: {} }, /valor is required/],
        [{ valor: { original: '1.00' } }, /calendario is required/],
        [{ ...BODY, calendario: { expiracao: 0 } }, /calendario\.expiracao/],
        [{ ...BODY, calendario: { expiracao: 1.5 } }, /calendario\.expiracao/],
        [{ ...BODY, calendario: { expiracao: 2 ** 31 } }, /calendario\.expiracao/],
        [{ ...BODY, calendario: { expiracao: 1e300 } }, /calendario\.expiracao/],
        [{ ...BODY, calendario: { expiracao: '60' } }, /calendario\.expiracao/],
        [{ ...BODY, calendario: { criacao: '2026-01-01T00:00:00Z' } }, /criacao is not an allowed property/],
        [{ ...BODY, chave: 'x'.repeat(78) }, /chave/],
        [{ ...BODY, chave: 'not a key' }, /chave is not a valid PIX key/],
        [{ ...BODY, chave: '' }, /chave/],
        [{ ...BODY, solicitacaoPagador: 'x'.repeat(141) }, /solicitacaoPagador/],
        [{ ...BODY, infoAdicionais: Array.from({ length: 51 }, () => ({ nome: 'n', valor: 'v' })) }, /infoAdicionais/],
        [{ ...BODY, infoAdicionais: [{ nome: 'x'.repeat(51), valor: 'v' }] }, /infoAdicionais\.0\.nome/],
        [{ ...BODY, infoAdicionais: [{ nome: 'n', valor: 'x'.repeat(201) }] }, /infoAdicionais\.0\.valor/],
        [{ ...BODY, infoAdicionais: [{ nome: 'n' }] }, /infoAdicionais\.0\.valor is required/],
        [{ ...BODY, infoAdicionais: [{ nome: '', valor: 'v' }] }, /infoAdicionais\.0\.nome/],
        [{ ...BODY, status: 'ATIVA' }, /status is not an allowed property/],
        [{ ...BODY, extra: 1 }, /extra is not an allowed property/],
        [{ ...BODY, solicitacaoPagador: 'a\u0000b' }, /NUL/],
        [[BODY], /body/],
      ];
      const before = await t.db.selectFrom('charges').select((eb) => eb.fn.countAll<bigint>().as('n')).executeTakeFirstOrThrow();
      for (const [body, message] of cases) {
        assert.match(errorMessage(await put(txid(), body), 400), message, JSON.stringify(body));
      }
      const afterwards = await t.db.selectFrom('charges').select((eb) => eb.fn.countAll<bigint>().as('n')).executeTakeFirstOrThrow();
      assert.equal(afterwards.n, before.n);
    });

    it('accepts the limits exactly: largest amount and expiracao, 140-character text, 50 items, 200-character values and name', async () => {
      const charge = await create({
        ...BODY,
        calendario: { expiracao: 2_147_483_647 },
        valor: { original: '9999999999.99' },
        solicitacaoPagador: 'ç'.repeat(140),
        infoAdicionais: Array.from({ length: 50 }, (_, i) => ({ nome: 'n'.repeat(50), valor: `${i}`.padEnd(200, 'v') })),
        devedor: { cpf: randomCpf(), nome: '名前 😀'.padEnd(200, 'x') },
      });
      assert.equal(charge.valor.original, '9999999999.99');
      assert.equal(charge.solicitacaoPagador, 'ç'.repeat(140));
      assert.equal(charge.infoAdicionais?.length, 50);
    });

    it('422 for a key that is not one of the account\'s, and for an account with no key', async () => {
      for (const chave of [otherKey, `nobody-${randomUUID()}@example.com`, randomCpf()]) {
        assert.match(errorMessage(await put(txid(), { ...BODY, chave }), 422), /not a key of this account/, chave);
      }
      const keyless = await createClient(t);
      assert.match(errorMessage(await put(txid(), BODY, keyless), 422), /no PIX key/);
    });

    it('409 when the account already has the txid, with the same body or another', async () => {
      const id = txid();
      assert.equal((await put(id, BODY)).statusCode, 201);
      assert.equal(errorMessage(await put(id, BODY), 409, 'TXID_TAKEN'), 'A charge of this account with this txid already exists');
      errorMessage(await put(id, { ...BODY, valor: { original: '99.00' } }), 409, 'TXID_TAKEN');
      assert.equal((await read(id)).valor.original, '10.00');
    });

    it('409 for one of many concurrent creations with the same txid', async () => {
      const id = txid();
      const answers = await Promise.all(Array.from({ length: 5 }, () => put(id, BODY)));
      assert.deepEqual(answers.map((r) => r.statusCode).sort(), [201, 409, 409, 409, 409]);
    });
  });

  describe('POST /cob', () => {
    it('201 with a generated txid of 32 alphanumerics, readable through GET', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/cob', headers: holder.headers, payload: BODY });
        assert.equal(res.statusCode, 201, res.body);
        const charge = res.json<Charge>();
        assert.match(charge.txid, /^[a-zA-Z0-9]{32}$/);
        assert.deepEqual(Object.keys(charge).sort(), CHARGE_KEYS);
        assert.deepEqual(await read(charge.txid), charge);
        ids.add(charge.txid);
      }
      assert.equal(ids.size, 3);
    });

    it('400 for an invalid body', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/cob', headers: holder.headers, payload: { valor: { original: '0.00' }, calendario: {} } });
      assert.match(errorMessage(res, 400), /valor\.original/);
    });
  });

  describe('GET /cob/{txid}', () => {
    it('404 for an unknown txid and for another account\'s charge; 400 for a malformed txid', async () => {
      const charge = await create();
      assert.match(errorMessage(await get(`/cob/${txid()}`), 404), /Charge not found/);
      errorMessage(await get(`/cob/${charge.txid}`, other), 404);
      errorMessage(await get(`/cob/${charge.txid}/qrcode`, other), 404);
      errorMessage(await patch(charge.txid, { solicitacaoPagador: 'x' }, other), 404);
      errorMessage(await get('/cob/short'), 400);
      assert.equal((await read(charge.txid)).revisao, 0);
    });
  });

  describe('GET /cob', () => {
    let lister: TestClient;
    const created: Charge[] = [];
    let start: Date;

    before(async () => {
      lister = await createClient(t, { name: 'Lister' });
      await addKey(lister, { type: 'evp' });
      start = t.clock.now();
      const cpf = randomCpf();
      const cnpj = randomCnpj();
      const bodies = [
        { ...BODY, devedor: { cpf, nome: 'A' } },
        { ...BODY, devedor: { cnpj, nome: 'B' } },
        { ...BODY, calendario: { expiracao: 30 } },
        { ...BODY, devedor: { cpf, nome: 'A' } },
        BODY,
      ];
      for (const body of bodies) {
        t.clock.advance(60_000);
        created.push(await create(body, lister));
      }
    });

    const list = (query: string) => get(`/cob?${query}`, lister);
    const range = (from: Date, to: Date) => `inicio=${from.toISOString()}&fim=${to.toISOString()}`;

    it('200 newest first, with the parameters and pagination metadata', async () => {
      const res = await list(range(start, t.clock.now()));
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json<{ parametros: Json; cobs: Charge[] }>();
      assert.deepEqual(body.parametros, {
        inicio: start.toISOString(),
        fim: t.clock.now().toISOString(),
        paginacao: { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 5 },
      });
      assert.deepEqual(body.cobs.map((c) => c.txid), created.map((c) => c.txid).reverse());
      assert.deepEqual(body.cobs[0], await read(created[4]!.txid, lister));
    });

    it('filters by interval (both ends inclusive), cpf, cnpj and effective status; paginates', async () => {
      const ids = async (query: string) => {
        const res = await list(query);
        assert.equal(res.statusCode, 200, res.body);
        return res.json<{ cobs: Charge[] }>().cobs.map((c) => c.txid);
      };
      const [c0, c1, c2, c3, c4] = created.map((c) => c.txid) as [string, string, string, string, string];
      const at = (i: number) => new Date(created[i]!.calendario.criacao);
      const all = range(start, t.clock.now());
      assert.deepEqual(await ids(range(at(1), at(3))), [c3, c2, c1]);
      assert.deepEqual(await ids(range(at(1), at(1))), [c1]);
      assert.deepEqual(await ids(range(new Date(at(1).getTime() + 1), new Date(at(3).getTime() - 1))), [c2]);
      // Offsets are instants too.
      const offset = at(2).toISOString().replace('Z', '+00:00');
      assert.deepEqual(await ids(`inicio=${encodeURIComponent(offset)}&fim=${encodeURIComponent(offset)}`), [c2]);
      // The widest interval: 31 days.
      assert.deepEqual(await ids(range(new Date(t.clock.now().getTime() - 31 * 86_400_000), t.clock.now())), [c4, c3, c2, c1, c0]);
      assert.deepEqual(await ids(`${all}&cpf=${created[0]!.devedor!.cpf}`), [c3, c0]);
      assert.deepEqual(await ids(`${all}&cnpj=${created[1]!.devedor!.cnpj}`), [c1]);
      assert.deepEqual(await ids(`${all}&cpf=${randomCpf()}`), []);
      // c2 expired 30 s after creation; the clock is past that.
      assert.deepEqual(await ids(`${all}&status=REMOVIDA_PELO_PSP`), [c2]);
      assert.deepEqual(await ids(`${all}&status=ATIVA`), [c4, c3, c1, c0]);
      assert.deepEqual(await ids(`${all}&status=CONCLUIDA`), []);

      const page = await list(`${all}&paginacao.paginaAtual=1&paginacao.itensPorPagina=2`);
      assert.equal(page.statusCode, 200, page.body);
      const paged = page.json<{ parametros: { paginacao: Json }; cobs: Charge[] }>();
      assert.deepEqual(paged.parametros.paginacao, { paginaAtual: 1, itensPorPagina: 2, quantidadeDePaginas: 3, quantidadeTotalDeItens: 5 });
      assert.deepEqual(paged.cobs.map((c) => c.txid), [c2, c1]);
      const past = await list(`${all}&paginacao.paginaAtual=7&paginacao.itensPorPagina=2&status=ATIVA`);
      assert.deepEqual(past.json(), {
        parametros: {
          inicio: start.toISOString(),
          fim: t.clock.now().toISOString(),
          status: 'ATIVA',
          paginacao: { paginaAtual: 7, itensPorPagina: 2, quantidadeDePaginas: 2, quantidadeTotalDeItens: 4 },
        },
        cobs: [],
      });
      // Another account sees none of them.
      const foreign = await get(`/cob?${all}`);
      assert.ok(!foreign.json<{ cobs: Charge[] }>().cobs.some((c) => created.some((x) => x.txid === c.txid)));
    });

    it('400 for missing or malformed dates, fim before inicio, bad filters and page sizes', async () => {
      const all = range(start, t.clock.now());
      const cases: [string, RegExp][] = [
        ['', /inicio is required/],
        [`inicio=${start.toISOString()}`, /fim is required/],
        [`inicio=2026-01-01&fim=2026-01-02`, /inicio/],
        [`inicio=yesterday&fim=${start.toISOString()}`, /inicio/],
        [`inicio=2026-02-30T00:00:00Z&fim=2026-03-01T00:00:00Z`, /inicio/],
        [`inicio=2026-01-01T23:59:60Z&fim=2026-01-02T00:00:00Z`, /inicio/],
        [range(t.clock.now(), start), /fim must not be before inicio/],
        ['inicio=0001-01-01T00:00:00Z&fim=9999-12-31T23:59:59.999Z', /at most 31 days apart/],
        [`inicio=0000-01-01T00:00:00Z&fim=${start.toISOString()}`, /inicio/],
        [`inicio=0001-01-01T00:00:00%2B01:00&fim=${start.toISOString()}`, /inicio/],
        [`inicio=${start.toISOString()}&fim=9999-12-31T23:59:59-01:00`, /fim/],
        [`${all}&paginacao.itensPorPagina=1001`, /paginacao\.itensPorPagina/],
        [`${all}&paginacao.itensPorPagina=0`, /paginacao\.itensPorPagina/],
        [`${all}&paginacao.paginaAtual=-1`, /paginacao\.paginaAtual/],
        [`${all}&paginacao.paginaAtual=x`, /paginacao\.paginaAtual/],
        [`${all}&paginacao.paginaAtual=99999999999999999999`, /paginacao\.paginaAtual/],
        [`${all}&status=PAGA`, /status/],
        [`${all}&cpf=123`, /cpf/],
        [`${all}&cnpj=123`, /cnpj/],
        [`${all}&cpf=${randomCpf()}&cnpj=${randomCnpj()}`, /cpf and cnpj/],
        [`${all}&page=1`, /page is not an allowed property/],
      ];
      for (const [query, message] of cases) assert.match(errorMessage(await list(query), 400), message, query);
    });

    it('400 INTERVAL_TOO_LONG when inicio and fim are more than 31 days apart, by a millisecond too', async () => {
      const fim = t.clock.now();
      const longest = new Date(fim.getTime() - 31 * 86_400_000);
      assert.equal((await list(range(longest, fim))).statusCode, 200);
      for (const inicio of [new Date(longest.getTime() - 1), new Date(fim.getTime() - 365 * 86_400_000)]) {
        assert.equal(errorMessage(await list(range(inicio, fim)), 400, 'INTERVAL_TOO_LONG'), 'inicio and fim are at most 31 days apart');
      }
    });
  });

  describe('PATCH /cob/{txid}', () => {
    it('revises: revisao 1 then 2, a new BR Code with the new amount, key and text; unchanged fields kept', async () => {
      const charge = await create({ ...BODY, devedor: { cpf: randomCpf(), nome: 'Devedor' }, solicitacaoPagador: 'primeira' });
      t.clock.advance(1000);
      const first = await patch(charge.txid, { valor: { original: '25.50' } });
      assert.equal(first.statusCode, 200, first.body);
      const revised = first.json<Charge>();
      assert.equal(revised.revisao, 1);
      assert.equal(revised.valor.original, '25.50');
      assert.deepEqual(revised.devedor, charge.devedor);
      assert.equal(revised.calendario.criacao, charge.calendario.criacao);
      assert.notEqual(revised.pixCopiaECola, charge.pixCopiaECola);
      assert.equal(revised.loc.location, revised.pixCopiaECola);
      assert.equal(revised.location, revised.pixCopiaECola);
      const pix = readPix(revised.pixCopiaECola);
      assert.equal(numberToCentavos(pix.transactionAmount ?? Number.NaN), 2550n);

      const second = await patch(charge.txid, {
        chave: holderEvp,
        solicitacaoPagador: 'segunda',
        calendario: { expiracao: 7200 },
        valor: { modalidadeAlteracao: 1 },
        devedor: { cnpj: randomCnpj(), nome: 'Nova Empresa' },
        infoAdicionais: [{ nome: 'a', valor: 'b' }],
      });
      assert.equal(second.statusCode, 200, second.body);
      const again = second.json<Charge>();
      assert.equal(again.revisao, 2);
      assert.equal(again.chave, holderEvp);
      assert.deepEqual(again.valor, { original: '25.50', modalidadeAlteracao: 1 });
      assert.equal(again.calendario.expiracao, 7200);
      assert.equal(again.devedor?.nome, 'Nova Empresa');
      assert.deepEqual(again.infoAdicionais, [{ nome: 'a', valor: 'b' }]);
      const pix2 = readPix(again.pixCopiaECola);
      assert.equal(pix2.pixKey, holderEvp);
      assert.equal(pix2.infoAdicional, 'segunda');
      assert.equal(pix2.txid, charge.txid);
      assert.deepEqual(await read(charge.txid), again);
      const row = await t.db.selectFrom('charges').select(['updated_at']).where('txid', '=', charge.txid).executeTakeFirstOrThrow();
      assert.equal(row.updated_at.getTime(), t.clock.now().getTime());
    });

    it('cancels with status REMOVIDA_PELO_USUARIO_RECEBEDOR; then it can neither change nor be paid', async () => {
      const charge = await create();
      const res = await patch(charge.txid, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json<Charge>().status, 'REMOVIDA_PELO_USUARIO_RECEBEDOR');
      assert.equal(res.json<Charge>().revisao, 1);
      assert.match(errorMessage(await patch(charge.txid, { solicitacaoPagador: 'x' }), 400), /charge is not ATIVA/);
      assert.match(errorMessage(await patch(charge.txid, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }), 400), /not ATIVA/);
      assert.match(errorMessage(await pay(charge.txid), 422), /not ATIVA/);
      assert.equal((await read(charge.txid)).revisao, 1);
    });

    it('400 for an empty body, another status, an invalid field; 404 unknown; 422 a foreign key', async () => {
      const charge = await create();
      const cases: [unknown, RegExp][] = [
        [{}, /at least one field/],
        [{ status: 'CONCLUIDA' }, /status/],
        [{ status: 'REMOVIDA_PELO_PSP' }, /status/],
        [{ status: 'ATIVA' }, /status/],
        [{ valor: {} }, /valor/],
        [{ calendario: {} }, /calendario/],
        [{ valor: { original: '0.00' } }, /valor\.original must be greater than 0/],
        [{ valor: { original: '1.0' } }, /valor\.original/],
        [{ devedor: { cpf: '1234567890', nome: 'x' } }, /devedor\.cpf/],
        [{ chave: 'nope' }, /chave/],
        [{ txid: txid() }, /txid is not an allowed property/],
        [{ revisao: 5 }, /revisao is not an allowed property/],
      ];
      for (const [body, message] of cases) assert.match(errorMessage(await patch(charge.txid, body), 400), message, JSON.stringify(body));
      assert.match(errorMessage(await patch(charge.txid, { chave: otherKey }), 422), /not a key of this account/);
      errorMessage(await patch(txid(), { solicitacaoPagador: 'x' }), 404);
      const res = await t.app.inject({ method: 'PATCH', url: `/cob/${charge.txid}`, headers: holder.headers });
      errorMessage(res, 400);
      assert.equal((await read(charge.txid)).revisao, 0);
    });
  });

  describe('expiry', () => {
    it('an ATIVA charge reads REMOVIDA_PELO_PSP from creation + expiracao on; paying or revising then stores it', async () => {
      const charge = await create({ ...BODY, calendario: { expiracao: 60 } });
      const paid = await create({ ...BODY, calendario: { expiracao: 60 } });
      t.clock.advance(59_999);
      assert.equal((await read(charge.txid)).status, 'ATIVA');
      t.clock.advance(1);
      assert.equal((await read(charge.txid)).status, 'REMOVIDA_PELO_PSP');
      const stored = () => t.db.selectFrom('charges').select('status').where('txid', '=', charge.txid).executeTakeFirstOrThrow();
      assert.equal((await stored()).status, 'ATIVA');
      const before = await available(holder);
      assert.match(errorMessage(await pay(charge.txid), 422), /not ATIVA \(it is REMOVIDA_PELO_PSP\)/);
      assert.equal((await stored()).status, 'REMOVIDA_PELO_PSP');
      assert.equal(await available(holder), before);

      assert.match(errorMessage(await patch(paid.txid, { solicitacaoPagador: 'x' }), 400), /not ATIVA/);
      const row = await t.db.selectFrom('charges').select(['status', 'revisao']).where('txid', '=', paid.txid).executeTakeFirstOrThrow();
      assert.deepEqual(row, { status: 'REMOVIDA_PELO_PSP', revisao: 0 });
    });

    it('a back-dated PIX (receivedAt) is checked against the charge at the time it was received', async () => {
      const created = t.clock.now();
      const charge = await create({ ...BODY, calendario: { expiracao: 60 } });
      t.clock.advance(120_000);
      const payer = { name: 'Pagador', document: randomCpf() };
      const late = await incoming({ pixKey: holderKey, amount: '10.00', payer, txid: charge.txid, receivedAt: new Date(created.getTime() + 60_000).toISOString() });
      assert.match(errorMessage(late, 422), /REMOVIDA_PELO_PSP/);

      const second = await create({ ...BODY, calendario: { expiracao: 60 } });
      const secondCreated = new Date(second.calendario.criacao);
      t.clock.advance(120_000);
      const early = await incoming({ pixKey: holderKey, amount: '10.00', payer, txid: second.txid, receivedAt: new Date(secondCreated.getTime() - 1).toISOString() });
      assert.match(errorMessage(early, 422), /did not exist yet/);
      const res = await incoming({ pixKey: holderKey, amount: '10.00', payer, txid: second.txid, receivedAt: new Date(secondCreated.getTime() + 59_999).toISOString() });
      assert.equal(res.statusCode, 201, res.body);
      const read2 = await read(second.txid);
      assert.equal(read2.status, 'CONCLUIDA');
      assert.equal(read2.pix?.[0]?.horario, new Date(secondCreated.getTime() + 59_999).toISOString());
    });
  });

  describe('BR Code and QR code', () => {
    it('the BR Code parses with pix-utils: key, amount, txid, merchant name (ASCII, 25) and city', async () => {
      const charge = await create({ ...BODY, chave: holderEvp, valor: { original: '1234.56' }, solicitacaoPagador: 'Pagamento de açaí   e frutas' });
      const pix = readPix(charge.pixCopiaECola);
      assert.equal(pix.pixKey, holderEvp);
      assert.equal(numberToCentavos(pix.transactionAmount ?? Number.NaN), 123456n);
      assert.equal(pix.txid, charge.txid);
      assert.equal(pix.merchantName, 'Joao Acai Comercio de Fru');
      assert.equal(pix.merchantCity, MERCHANT_CITY);
      assert.equal(pix.infoAdicional, 'Pagamento de acai e frutas');
      assert.equal(charge.solicitacaoPagador, 'Pagamento de açaí   e frutas');
    });

    it('solicitacaoPagador is cut to the room beside the key in the BR Code, and kept whole in the charge', async () => {
      const text = 'ç'.repeat(140);
      for (const chave of [holderEvp, holderKey]) {
        const charge = await create({ ...BODY, chave, solicitacaoPagador: text });
        const pix = readPix(charge.pixCopiaECola);
        // Field 26 holds at most 99 characters: GUI (4 + 14), key (4 + its length), text (4 + the rest).
        assert.equal(pix.infoAdicional, 'c'.repeat(99 - 4 - 14 - 4 - chave.length - 4));
        assert.equal(charge.solicitacaoPagador, text);
      }
      // A 77-character key leaves no room: the text is left out of the BR Code.
      const longKey = await addKey(holder, { type: 'email', key: `${randomAlphanumeric(60).toLowerCase()}@${'b'.repeat(12)}.com` });
      assert.equal(longKey.length, 77);
      const long = await create({ ...BODY, chave: longKey, solicitacaoPagador: 'texto' });
      const longPix = readPix(long.pixCopiaECola);
      assert.equal(longPix.pixKey, longKey);
      assert.equal(longPix.infoAdicional, undefined);
      assert.equal(long.solicitacaoPagador, 'texto');
      const emoji = readPix((await create({ ...BODY, solicitacaoPagador: '😀' })).pixCopiaECola);
      assert.equal(emoji.infoAdicional, undefined);
    });

    it('an account name with nothing left in ASCII still gives a valid BR Code', async () => {
      const client = await createClient(t, { name: '李小龍' });
      await addKey(client, { type: 'evp' });
      const pix = readPix((await create(BODY, client)).pixCopiaECola);
      assert.ok(pix.merchantName.length > 0);
    });

    it('PNG (default) and SVG images; 400 for another format', async () => {
      const charge = await create();
      const png = await get(`/cob/${charge.txid}/qrcode`);
      assert.equal(png.statusCode, 200);
      assert.equal(png.headers['content-type'], 'image/png');
      assert.deepEqual([...png.rawPayload.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      const explicit = await get(`/cob/${charge.txid}/qrcode?format=png`);
      assert.deepEqual(explicit.rawPayload, png.rawPayload);
      const svg = await get(`/cob/${charge.txid}/qrcode?format=svg`);
      assert.equal(svg.statusCode, 200);
      assert.match(String(svg.headers['content-type']), /^image\/svg\+xml/);
      assert.match(svg.body, /<svg/);
      errorMessage(await get(`/cob/${charge.txid}/qrcode?format=gif`), 400);
      errorMessage(await get(`/cob/${txid()}/qrcode`), 404);
    });
  });

  describe('paying', () => {
    it('POST /sandbox/cob/{txid}/pay: CONCLUIDA, balance up, the PAYMENT row and a RECEIVE notification with the txid', async () => {
      const charge = await create({ ...BODY, valor: { original: '37.45' } });
      const before = await available(holder);
      const res = await pay(charge.txid);
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<Movement>();
      assert.deepEqual(Object.keys(body).sort(), ['endToEndId', 'transactionId']);
      assert.match(body.endToEndId, new RegExp(`^E${SANDBOX_PAYER_ISPB}\\d{12}[A-Za-z0-9]{11}$`));
      assert.equal(await available(holder), before + 37.45);

      const concluded = await read(charge.txid);
      assert.equal(concluded.status, 'CONCLUIDA');
      assert.equal(concluded.revisao, 0);
      assert.deepEqual(concluded.pix, [{ endToEndId: body.endToEndId, txid: charge.txid, valor: '37.45', horario: t.clock.now().toISOString() }]);
      assert.deepEqual(Object.keys(concluded).sort(), [...CHARGE_KEYS, 'pix'].sort());

      const list = await get(`/api/transactions?externalId=${charge.txid}`);
      assert.equal(list.statusCode, 200, list.body);
      const [tx, ...rest] = list.json<{ data: Json[] }>().data;
      assert.equal(rest.length, 0);
      assert.equal(tx?.transactionId, String(body.transactionId));
      assert.equal(tx?.externalId, charge.txid);
      assert.equal(tx?.operationType, 'Pix in');
      assert.equal(tx?.originalAmount, 37.45);
      assert.equal(tx?.endToEndId, body.endToEndId);
      assert.equal((tx?.counterpart as { name: string }).name, 'Sandbox Payer');

      assert.deepEqual(
        await onlyEvent(t.db, body.transactionId, 'cash_in', holder.accountId),
        receivePayload({ id: body.transactionId, txId: charge.txid, amount: '37.45', endToEndId: body.endToEndId, debtor: { name: 'Sandbox Payer', document: masked(SANDBOX_PAYER_CPF) } }),
      );

      assert.match(errorMessage(await pay(charge.txid), 422), /not ATIVA \(it is CONCLUIDA\)/);
      assert.match(errorMessage(await patch(charge.txid, { status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR' }), 400), /not ATIVA/);
      assert.equal(await available(holder), before + 37.45);
      await assertLedgerInvariants(t.db);
    });

    it('the payer may be given; an empty JSON body is the default payer; 400 for a bad payer; 404 for an unknown charge', async () => {
      const first = await create();
      const document = randomCnpj();
      const res = await pay(first.txid, { payer: { name: 'Empresa Pagadora', document, ispb: '60701190' } });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<Movement>();
      assert.ok(body.endToEndId.startsWith('E60701190'));
      const row = await t.db.selectFrom('transactions').selectAll().where('id', '=', BigInt(body.transactionId)).executeTakeFirstOrThrow();
      assert.deepEqual([row.counterpart_name, row.counterpart_document, row.counterpart_ispb, row.txid, row.external_id], ['Empresa Pagadora', document, '60701190', first.txid, first.txid]);

      for (const payload of [{}, '']) {
        const charge = await create();
        const empty = await t.app.inject({
          method: 'POST',
          url: `/sandbox/cob/${charge.txid}/pay`,
          headers: { ...adminHeaders, 'content-type': 'application/json' },
          payload: payload === '' ? '' : JSON.stringify(payload),
        });
        assert.equal(empty.statusCode, 201, empty.body);
      }

      const charge = await create();
      const bad: [unknown, RegExp][] = [
        [{ payer: { name: 'P', document: badCheckDigit(randomCpf()) } }, /payer\.document/],
        [{ payer: { name: 'P' } }, /document is required/],
        [{ payer: { name: 'P', document: randomCpf(), ispb: '1' } }, /ispb/],
        [{ amount: '10.00' }, /amount is not an allowed property/],
      ];
      for (const [payload, message] of bad) assert.match(errorMessage(await pay(charge.txid, payload), 400), message, JSON.stringify(payload));
      assertError(await t.app.inject({ method: 'POST', url: `/sandbox/cob/${charge.txid}/pay`, headers: { ...adminHeaders, 'content-type': 'application/json' }, payload: '{' }), 400);
      assert.equal((await read(charge.txid)).status, 'ATIVA');
      assert.match(errorMessage(await pay(txid()), 404), /Charge not found/);
      errorMessage(await pay('short'), 400);
    });

    it('POST /sandbox/pix/incoming with txid: exact amount pays; a wrong amount is 422; another account\'s key is 404', async () => {
      const charge = await create({ ...BODY, valor: { original: '50.00' } });
      const payer = { name: 'Pagador Externo', document: randomCpf() };
      const before = await available(holder);
      for (const amount of ['49.99', '50.01', '0.01']) {
        assert.match(errorMessage(await incoming({ pixKey: holderKey, amount, payer, txid: charge.txid }), 422), /valor\.original/, amount);
      }
      errorMessage(await incoming({ pixKey: otherKey, amount: '50.00', payer, txid: charge.txid }), 404);
      errorMessage(await incoming({ pixKey: holderKey, amount: '50.00', payer, txid: txid() }), 404);
      assert.equal(await available(holder), before);
      assert.equal((await read(charge.txid)).status, 'ATIVA');

      // Any key of the charge's account will do: the money reaches the same account.
      const res = await incoming({ pixKey: holderEvp, amount: '50.00', payer, txid: charge.txid, description: 'pagamento' });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json<Movement>();
      assert.equal(await available(holder), before + 50);
      const [event] = await outboxOf(t.db, body.transactionId);
      assert.equal(event?.event_type, 'cash_in');
      assert.equal(event?.payload.data.txId, charge.txid);
      const row = await t.db.selectFrom('transactions').selectAll().where('id', '=', BigInt(body.transactionId)).executeTakeFirstOrThrow();
      assert.deepEqual([row.pix_key, row.txid, row.description, row.counterpart_name], [holderKey, charge.txid, 'pagamento', 'Pagador Externo']);
      assert.match(errorMessage(await incoming({ pixKey: holderKey, amount: '50.00', payer, txid: charge.txid }), 422), /CONCLUIDA/);
    });

    it('modalidadeAlteracao 1 accepts any amount greater than 0', async () => {
      const charge = await create({ ...BODY, valor: { original: '50.00', modalidadeAlteracao: 1 } });
      const res = await incoming({ pixKey: holderKey, amount: '12.34', payer: { name: 'P', document: randomCpf() }, txid: charge.txid });
      assert.equal(res.statusCode, 201, res.body);
      const concluded = await read(charge.txid);
      assert.equal(concluded.status, 'CONCLUIDA');
      assert.equal(concluded.pix?.[0]?.valor, '12.34');
      assert.equal(concluded.valor.original, '50.00');
    });

    it('a charge revised to another amount is paid with the new one', async () => {
      const charge = await create();
      assert.equal((await patch(charge.txid, { valor: { original: '11.00' } })).statusCode, 200);
      errorMessage(await incoming({ pixKey: holderKey, amount: '10.00', payer: { name: 'P', document: randomCpf() }, txid: charge.txid }), 422);
      const res = await pay(charge.txid);
      assert.equal(res.statusCode, 201, res.body);
      assert.equal((await read(charge.txid)).pix?.[0]?.valor, '11.00');
    });
  });

  describe('concurrent payments (PostgreSQL)', { skip: onPostgres ? false : 'needs concurrent connections to one server: set TEST_DATABASE_URL' }, () => {
    it('10 simultaneous payments of one charge: one 201, nine 422, the balance rises once', async () => {
      const charge = await create({ ...BODY, valor: { original: '7.00' } });
      const before = await available(holder);
      const answers = await Promise.all(Array.from({ length: 10 }, () => pay(charge.txid)));
      const statuses = answers.map((r) => r.statusCode).sort();
      assert.deepEqual(statuses, [201, 422, 422, 422, 422, 422, 422, 422, 422, 422]);
      assert.equal(await available(holder), before + 7);
      const rows = await t.db.selectFrom('transactions').select('id').where('txid', '=', charge.txid).execute();
      assert.equal(rows.length, 1);
      await assertLedgerInvariants(t.db);
    });

    it('a payment and a revision of the same charge take turns', async () => {
      const charge = await create({ ...BODY, valor: { original: '8.00' } });
      const [paid, revised] = await Promise.all([pay(charge.txid), patch(charge.txid, { valor: { original: '9.00' } })]);
      const final = await read(charge.txid);
      assert.equal(final.status, 'CONCLUIDA');
      if (revised.statusCode === 200) {
        // The revision went first: the payment paid the new amount.
        assert.equal(final.pix?.[0]?.valor, '9.00');
      } else {
        assert.equal(revised.statusCode, 400);
        assert.equal(final.pix?.[0]?.valor, '8.00');
      }
      assert.equal(paid.statusCode, 201);
    });
  });
});

