import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Type } from 'typebox';
import { BODY_LIMIT_BYTES, createServer } from '../../app.ts';
import { AppError, badRequest, notFound, unauthorized } from '../../http/errors.ts';
import { ProblemaSchema, problem, problemResponses, ViolacaoSchema, type Problema } from './problems.ts';
import { BCB_PREFIX, bcbScope, withoutTrailingSlash } from './scope.ts';
import { createClient } from '../../../test/factories.ts';
import { startTestApp, type TestApp } from '../../../test/harness.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * BCB's `Problema` and `Violacao` as its openapi.yaml (2.9.0) writes them, carried here so that
 * the test needs no file outside the project.
 */
const BCB_VIOLACAO = {
  $id: 'bcb-violacao',
  type: 'object',
  properties: { razao: { type: 'string' }, propriedade: { type: 'string' }, valor: { type: 'string' } },
};
const BCB_PROBLEMA = {
  type: 'object',
  required: ['type', 'title', 'status'],
  properties: {
    type: { type: 'string', format: 'uri' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    correlationId: { type: 'string' },
    violacoes: { type: 'array', items: { $ref: 'bcb-violacao' } },
  },
};
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(BCB_VIOLACAO);
const validBcbProblem = ajv.compile(BCB_PROBLEMA);

/** A problem answer: its media type, BCB's schema, the type URL for `name`, and the request id. */
function assertProblem(res: LightMyRequestResponse, status: number, name: string): Problema {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = res.json() as Problema;
  assert.ok(validBcbProblem(body), JSON.stringify(validBcbProblem.errors));
  assert.equal(body.type, `https://pix.bcb.gov.br/api/v2/error/${name}`);
  assert.equal(body.status, status);
  assert.ok(body.title.length > 0 && typeof body.detail === 'string' && body.detail.length > 0);
  assert.equal(body.correlationId, res.headers['x-request-id']);
  for (const key of ['statusCode', 'message', 'error', 'code']) assert.ok(!(key in body), `no seed field ${key}`);
  return body;
}

const ChargeBody = Type.Object(
  {
    calendario: Type.Object({ dataDeVencimento: Type.String({ format: 'date' }), expiracao: Type.Optional(Type.Integer({ minimum: 1 })) }),
    valor: Type.Object({ original: Type.String({ pattern: '^\\d{1,10}\\.\\d{2}$' }), modalidadeAlteracao: Type.Optional(Type.Integer({ minimum: 0, maximum: 1 })) }),
    chave: Type.String({ minLength: 1, maxLength: 77 }),
    itens: Type.Optional(Type.Array(Type.Object({ nome: Type.String({ maxLength: 5 }) }, { additionalProperties: false }))),
    tipo: Type.Optional(Type.Union([Type.Literal('A'), Type.Literal('B')])),
  },
  { additionalProperties: false },
);

/** Operations that exist only in this test, registered into the /v2 scope as real ones will be. */
async function testOperations(scope: FastifyInstance) {
  scope.put('/cobv/:txid', {
    schema: {
      params: Type.Object({ txid: Type.String({ pattern: '^[a-zA-Z0-9]{26,35}$' }) }),
      body: ChargeBody,
      response: { 201: Type.Object({ txid: Type.String() }), ...problemResponses(400, 404) },
    },
    config: { bcbProblems: { invalid: 'CobVOperacaoInvalida', notFound: 'CobVNaoEncontrada' } },
    handler: async (request, reply) => reply.status(201).send({ txid: (request.params as { txid: string }).txid }),
  });
  scope.get('/cob/:txid', async (request) => {
    const { txid } = request.params as { txid: string };
    if (txid === 'cancelled') throw problem('CobOperacaoInvalida', 'A cobrança não está ATIVA.');
    if (txid === 'gone') throw problem('PermanentementeRemovido', 'A cobrança foi removida.');
    throw problem('CobNaoEncontrado', `Nenhuma cobrança com o txid ${txid}.`);
  });
  scope.get('/core/:what', { config: { bcbProblems: { invalid: 'CobOperacaoInvalida', notFound: 'CobNaoEncontrado' } } }, async (request) => {
    const { what } = request.params as { what: string };
    if (what === 'boom') throw new Error('secret detail at /srv/app.ts:12');
    if (what === 'missing') throw notFound('CHARGE_NOT_FOUND', 'Charge not found');
    if (what === 'conflict') throw new AppError(409, 'TXID_TAKEN', 'The account already has a charge with this txid');
    if (what === 'token') throw unauthorized('TOKEN_INVALID', 'Invalid or expired access token');
    if (what === 'busy') throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    return { what };
  });
  scope.post('/rule', { config: { bcbProblems: { invalid: 'CobOperacaoInvalida' } } }, async (request) => {
    const { fail } = request.body as { fail: string };
    throw badRequest('VALIDATION_FAILED', fail);
  });
}

describe('BCB dialect: problems under /v2', () => {
  let app: FastifyInstance;

  before(async () => {
    app = createServer({ logLevel: false });
    await app.register(bcbScope(testOperations), { prefix: BCB_PREFIX });
    app.post('/root/echo', { schema: { body: ChargeBody } }, async (request) => request.body);
    app.get('/root/boom', async () => {
      throw new Error('boom');
    });
    await app.ready();
  });
  after(() => app.close());

  const put = (body: unknown, txid = 'a'.repeat(26)) =>
    app.inject({ method: 'PUT', url: `/v2/cobv/${txid}`, headers: { 'x-request-id': 'req-1' }, payload: body as object });

  it('accepts a valid request', async () => {
    const res = await put({ calendario: { dataDeVencimento: '2025-01-31' }, valor: { original: '10.00' }, chave: 'k' });
    assert.equal(res.statusCode, 201, res.body);
  });

  it('lists every violation of a body at once, each with its dotted path and value', async () => {
    const res = await put({
      calendario: { dataDeVencimento: '31/01/2025', expiracao: 0 },
      valor: { original: 10, modalidadeAlteracao: 2 },
      itens: [{ nome: 'ok' }, { nome: 'longer than five', extra: true }],
      tipo: 'C',
      desconhecido: 1,
    });
    const body = assertProblem(res, 400, 'CobVOperacaoInvalida');
    assert.equal(body.correlationId, 'req-1');
    const by = new Map(body.violacoes?.map((v) => [v.propriedade, v]));
    assert.deepEqual([...by.keys()].sort(), [
      'calendario.dataDeVencimento',
      'calendario.expiracao',
      'chave',
      'desconhecido',
      'itens[1].extra',
      'itens[1].nome',
      'tipo',
      'valor.modalidadeAlteracao',
      'valor.original',
    ]);
    assert.equal(by.get('calendario.dataDeVencimento')?.valor, '31/01/2025');
    assert.equal(by.get('valor.original')?.valor, '10');
    assert.equal(by.get('valor.modalidadeAlteracao')?.valor, '2');
    assert.equal(by.get('itens[1].nome')?.valor, 'longer than five');
    assert.equal(by.get('chave')?.valor, undefined, 'a missing field has no value');
    assert.match(by.get('chave')?.razao ?? '', /obrigatório/);
    assert.match(by.get('desconhecido')?.razao ?? '', /não é permitido/);
    assert.match(by.get('tipo')?.razao ?? '', /um de: A, B/);
    assert.equal(by.get('tipo')?.valor, 'C');
  });

  it('reports path parameters by name', async () => {
    const res = await put({ calendario: { dataDeVencimento: '2025-01-31' }, valor: { original: '1.00' }, chave: 'k' }, 'short');
    const body = assertProblem(res, 400, 'CobVOperacaoInvalida');
    assert.deepEqual(body.violacoes?.map((v) => [v.propriedade, v.valor]), [['txid', 'short']]);
  });

  it('answers malformed JSON, an empty body, a body too large and another media type with problems', async () => {
    const url = `/v2/cobv/${'a'.repeat(26)}`;
    const json = { 'content-type': 'application/json' };
    assertProblem(await app.inject({ method: 'PUT', url, headers: json, payload: '{"chave": ' }), 400, 'CobVOperacaoInvalida');
    assertProblem(await app.inject({ method: 'PUT', url, headers: json, payload: '' }), 400, 'CobVOperacaoInvalida');
    const large = JSON.stringify({ chave: 'x'.repeat(BODY_LIMIT_BYTES) });
    assertProblem(await app.inject({ method: 'PUT', url, headers: json, payload: large }), 413, 'RequisicaoInvalida');
    assertProblem(await app.inject({ method: 'PUT', url, headers: { 'content-type': 'text/plain' }, payload: 'x' }), 415, 'RequisicaoInvalida');
  });

  it('answers a bad percent-escape under /v2 with a problem, before routing', async () => {
    assertProblem(await app.inject({ method: 'GET', url: '/v2/cob/%zz' }), 400, 'RequisicaoInvalida');
  });

  it('lets an operation raise its own named problem', async () => {
    const cancelled = assertProblem(await app.inject({ method: 'GET', url: '/v2/cob/cancelled' }), 400, 'CobOperacaoInvalida');
    assert.equal(cancelled.detail, 'A cobrança não está ATIVA.');
    assert.equal(cancelled.title, 'Cobrança inválida.');
    assertProblem(await app.inject({ method: 'GET', url: '/v2/cob/abc' }), 404, 'CobNaoEncontrado');
    assertProblem(await app.inject({ method: 'GET', url: '/v2/cob/gone' }), 410, 'PermanentementeRemovido');
  });

  it("lists the field a core rule refused in violacoes, with the value the request gave it; a message naming none lists nothing", async () => {
    const rule = async (fail: string, body: Record<string, unknown> = {}) =>
      assertProblem(await app.inject({ method: 'POST', url: '/v2/rule', payload: { fail, ...body } }), 400, 'CobOperacaoInvalida').violacoes;
    assert.deepEqual(await rule('valor.original must be greater than 0', { valor: { original: '0.00' } }), [
      { razao: 'O campo valor.original deve ser maior que 0.', propriedade: 'valor.original', valor: '0.00' },
    ]);
    assert.deepEqual(await rule('valor.desconto.descontoDataFixa[1].data must not be after calendario.dataDeVencimento', { valor: { desconto: { descontoDataFixa: [{}, { data: '2030-01-01' }] } } }), [
      { razao: 'O campo valor.desconto.descontoDataFixa[1].data não pode ser posterior a calendario.dataDeVencimento.', propriedade: 'valor.desconto.descontoDataFixa[1].data', valor: '2030-01-01' },
    ]);
    assert.deepEqual(await rule('chave is not a key of this account', { chave: 'x@y.com' }), [{ razao: 'O campo chave não é uma chave Pix da conta.', propriedade: 'chave', valor: 'x@y.com' }]);
    assert.equal(await rule('A charge of this account with this txid already exists'), undefined);
    assert.equal(await rule('txid is taken'), undefined, 'a single word that is no field of the request names nothing');
  });

  it("maps the core's errors to the route's names and BCB's statuses", async () => {
    assertProblem(await app.inject({ method: 'GET', url: '/v2/core/missing' }), 404, 'CobNaoEncontrado');
    assertProblem(await app.inject({ method: 'GET', url: '/v2/core/conflict' }), 400, 'CobOperacaoInvalida');
    const busy = await app.inject({ method: 'GET', url: '/v2/core/busy' });
    assertProblem(busy, 503, 'ServicoIndisponivel');
    assert.equal(busy.headers['retry-after'], '1');
  });

  it('answers an authentication failure with AcessoNegado and a Bearer challenge', async () => {
    const res = await app.inject({ method: 'GET', url: '/v2/core/token' });
    assertProblem(res, 401, 'AcessoNegado');
    assert.match(String(res.headers['www-authenticate']), /^Bearer/);
  });

  it('answers an unexpected error with ErroInternoDoServidor, without its message or stack', async () => {
    const res = await app.inject({ method: 'GET', url: '/v2/core/boom' });
    const body = assertProblem(res, 500, 'ErroInternoDoServidor');
    assert.doesNotMatch(res.body, /secret|srv|app\.ts|at /);
    assert.deepEqual(Object.keys(body).sort(), ['correlationId', 'detail', 'status', 'title', 'type']);
  });

  it('answers an unknown /v2 route, or a known path with another method, with NaoEncontrado', async () => {
    for (const [method, url] of [['GET', '/v2/nothing/here?x=1'], ['GET', '/v2'], ['DELETE', '/v2/cob/abc']] as const) {
      assertProblem(await app.inject({ method, url }), 404, 'NaoEncontrado');
    }
  });

  it('leaves the root dialect as it is: the seed body, the first violation only', async () => {
    const res = await app.inject({ method: 'POST', url: '/root/echo', payload: { calendario: {}, valor: {} } });
    assert.equal(res.statusCode, 400);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const body = res.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'message', 'statusCode']);
    assert.equal(body.code, 'VALIDATION_FAILED');
    assert.equal(body.message, 'body: chave is required');
    for (const url of ['/root/boom', '/root/nothing', '/v2x/nothing', '/root/%zz']) {
      const answer = await app.inject({ method: 'GET', url });
      assert.match(String(answer.headers['content-type']), /^application\/json/, url);
      assert.deepEqual(Object.keys(answer.json()).sort(), ['code', 'error', 'message', 'statusCode'], url);
    }
  });

  it('declares the problem schema as BCB writes it', () => {
    const ours = JSON.parse(JSON.stringify(ProblemaSchema)) as typeof BCB_PROBLEMA & { $id: string };
    assert.deepEqual(ours.required, BCB_PROBLEMA.required);
    assert.deepEqual(Object.keys(ours.properties), Object.keys(BCB_PROBLEMA.properties));
    for (const [key, schema] of Object.entries(BCB_PROBLEMA.properties)) {
      assert.equal((ours.properties as Record<string, { type: string }>)[key]?.type, schema.type, key);
    }
    assert.deepEqual(Object.keys(ViolacaoSchema.properties), Object.keys(BCB_VIOLACAO.properties));
    assert.equal(ours.properties.type.format, 'uri');
  });
});

describe('BCB dialect: the /v2 scope of the service', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('answers an unknown /v2 route with a NaoEncontrado problem, and an unknown root route with the seed body', async () => {
    const v2 = await t.app.inject({ method: 'GET', url: '/v2/nada/abc', headers: { 'x-request-id': 'abc-1' } });
    assert.equal(assertProblem(v2, 404, 'NaoEncontrado').correlationId, 'abc-1');
    const root = await t.app.inject({ method: 'GET', url: '/no/such/route' });
    assert.equal(root.statusCode, 404);
    assert.deepEqual(Object.keys(root.json()).sort(), ['code', 'error', 'message', 'statusCode']);
  });

  it('routes a /v2 path with a trailing slash as the path without it, as SDKs send lists (GET /v2/cobv/)', async () => {
    assert.equal(withoutTrailingSlash('/v2/cobv/'), '/v2/cobv');
    assert.equal(withoutTrailingSlash('/v2/cob//?inicio=a&fim=b'), '/v2/cob?inicio=a&fim=b');
    assert.equal(withoutTrailingSlash('/v2/cob/abc'), '/v2/cob/abc');
    assert.equal(withoutTrailingSlash('/v2/'), '/v2/');
    assert.equal(withoutTrailingSlash('/api/webhooks/'), '/api/webhooks/', 'the root dialect is left as it is');
    assert.equal(withoutTrailingSlash('/v2/cob?x=/'), '/v2/cob?x=/');
    const client = await createClient(t);
    const now = t.clock.now();
    const query = `inicio=${new Date(now.getTime() - 60_000).toISOString()}&fim=${new Date(now.getTime() + 60_000).toISOString()}`;
    const listed = await t.app.inject({ method: 'GET', url: `/v2/cobv/?${query}`, headers: client.headers });
    assert.equal(listed.statusCode, 200, listed.body);
    assert.deepEqual(listed.json<{ cobs: unknown[] }>().cobs, []);
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/webhooks/', headers: client.headers })).statusCode, 404);
  });
});
