import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIST_LIMITS } from '../../http/list-queries.ts';
import { ADMIN_SECURITY, BEARER_SECURITY, errorResponses, Timestamp } from '../../http/schemas.ts';
import { SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB } from '../sandbox/service.ts';
import { chargeQrCode, createCharge, getCharge, listChargesOf, payCharge, reviseCharge, type ChargeListDeps, type ChargesDeps } from './service.ts';
import { chargeView } from './views.ts';

export type { ChargeListDeps, ChargesDeps } from './service.ts';

const TXID_PATTERN = '^[a-zA-Z0-9]{26,35}$';
const TxidParams = Type.Object({ txid: Type.String({ pattern: TXID_PATTERN, description: 'Charge id: 26 to 35 characters of [a-zA-Z0-9]' }) });
const Status = Type.Union([
  Type.Literal('ATIVA'),
  Type.Literal('CONCLUIDA'),
  Type.Literal('REMOVIDA_PELO_USUARIO_RECEBEDOR'),
  Type.Literal('REMOVIDA_PELO_PSP'),
]);
const Cpf = Type.String({ pattern: '^[0-9]{11}$', description: 'CPF, 11 digits' });
const Cnpj = Type.String({ pattern: '^[0-9A-Z]{12}[0-9]{2}$', description: 'CNPJ, 14 characters (alphanumeric CNPJ included)' });
const Original = Type.String({ pattern: '^[0-9]{1,10}\\.[0-9]{2}$', description: 'Amount, a decimal string with 2 places greater than 0: "10.00"' });
const InfoAdicional = Type.Object({ nome: Type.String({ minLength: 1, maxLength: 50 }), valor: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/** The fields of PUT /cob/{txid} and POST /cob; in PATCH every one is optional and must change something. */
const chargeFields = (revision: boolean) => {
  const some = revision ? { minProperties: 1 } : {};
  const original = revision ? Type.Optional(Original) : Original;
  const calendario = Type.Object(
    { expiracao: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Seconds of validity from creation (default 86400)' })) },
    { additionalProperties: false, ...some },
  );
  const valor = Type.Object(
    {
      original,
      modalidadeAlteracao: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: '1: the payer may change the amount (default 0)' })),
    },
    { additionalProperties: false, ...some },
  );
  return {
    calendario: revision ? Type.Optional(calendario) : calendario,
    devedor: Type.Optional(
      Type.Object(
        { cpf: Type.Optional(Cpf), cnpj: Type.Optional(Cnpj), nome: Type.String({ minLength: 1, maxLength: 200 }) },
        { additionalProperties: false, description: 'The payer: nome and exactly one of cpf or cnpj' },
      ),
    ),
    valor: revision ? Type.Optional(valor) : valor,
    chave: Type.Optional(Type.String({ minLength: 1, maxLength: 77, description: "One of the account's PIX keys (default: its oldest)" })),
    solicitacaoPagador: Type.Optional(Type.String({ maxLength: 140, description: 'Text shown to the payer' })),
    infoAdicionais: Type.Optional(Type.Array(InfoAdicional, { maxItems: 50 })),
  };
};

const ChargeBody = Type.Object(chargeFields(false), { additionalProperties: false });
const RevisionBody = Type.Object(
  {
    ...chargeFields(true),
    status: Type.Optional(Type.Literal('REMOVIDA_PELO_USUARIO_RECEBEDOR', { description: 'Cancels the charge' })),
  },
  { additionalProperties: false },
);

const Charge = Type.Object({
  calendario: Type.Object({ criacao: Timestamp('Creation time'), expiracao: Type.Integer({ description: 'Seconds of validity' }) }),
  txid: Type.String(),
  revisao: Type.Integer({ description: 'Revision: 0 on creation, +1 on every change' }),
  loc: Type.Object({ id: Type.Integer(), location: Type.String({ description: 'The BR Code (copy-and-paste payload)' }), tipoCob: Type.Literal('cob') }),
  location: Type.String({ description: 'Same as loc.location' }),
  status: Status,
  devedor: Type.Optional(Type.Object({ cpf: Type.Optional(Type.String()), cnpj: Type.Optional(Type.String()), nome: Type.String() })),
  valor: Type.Object({ original: Type.String(), modalidadeAlteracao: Type.Integer() }),
  chave: Type.String(),
  solicitacaoPagador: Type.Optional(Type.String()),
  infoAdicionais: Type.Optional(Type.Array(Type.Object({ nome: Type.String(), valor: Type.String() }))),
  pixCopiaECola: Type.String({ description: 'Same BR Code' }),
  pix: Type.Optional(
    Type.Array(Type.Object({ endToEndId: Type.String(), txid: Type.String(), valor: Type.String(), horario: Timestamp('Time of the payment') }), {
      description: 'The payment that concluded the charge',
    }),
  ),
});

const ListQuery = Type.Object(
  {
    inicio: Type.String({ format: 'date-time', description: 'Charges created from this instant (RFC 3339)' }),
    fim: Type.String({ format: 'date-time', description: 'up to this instant, inclusive (RFC 3339), at most 31 days after inicio' }),
    cpf: Type.Optional(Cpf),
    cnpj: Type.Optional(Cnpj),
    status: Type.Optional(Status),
    'paginacao.paginaAtual': Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: '0-indexed page (default 0)' })),
    'paginacao.itensPorPagina': Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size, at most 1000 (default 100)' })),
  },
  { additionalProperties: false },
);

const ListResponse = Type.Object({
  parametros: Type.Object({
    inicio: Timestamp(),
    fim: Timestamp(),
    cpf: Type.Optional(Type.String()),
    cnpj: Type.Optional(Type.String()),
    status: Type.Optional(Status),
    paginacao: Type.Object({
      paginaAtual: Type.Integer(),
      itensPorPagina: Type.Integer(),
      quantidadeDePaginas: Type.Integer(),
      quantidadeTotalDeItens: Type.Integer(),
    }),
  }),
  cobs: Type.Array(Charge),
});

const QrImage = {
  description: 'The QR code of the BR Code',
  content: {
    'image/png': { schema: { type: 'string', format: 'binary' } },
    'image/svg+xml': { schema: { type: 'string' } },
  },
};

/** The account holder's charge (cob) endpoints. */
export const chargeRoutes =
  (deps: ChargeListDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['Charges'], security: BEARER_SECURITY };

    app.put(
      '/cob/:txid',
      {
        schema: {
          ...common,
          operationId: 'createCharge',
          summary: 'Create an immediate charge with your txid',
          description: "A txid this account already used (even with the same body) is 409; other accounts' txids are invisible and never collide.",
          params: TxidParams,
          body: ChargeBody,
          response: { 201: Charge, ...errorResponses(400, 401, 409, 415, 422) },
        },
      },
      async (request, reply) => {
        const row = await createCharge(deps, request.accountId, request.body, request.params.txid);
        return reply.status(201).send(chargeView(row, deps.clock.now()));
      },
    );

    app.post(
      '/cob',
      {
        schema: {
          ...common,
          operationId: 'createChargeWithGeneratedTxid',
          summary: 'Create an immediate charge; the service draws its txid',
          body: ChargeBody,
          response: { 201: Charge, ...errorResponses(400, 401, 415, 422) },
        },
      },
      async (request, reply) => {
        const row = await createCharge(deps, request.accountId, request.body);
        return reply.status(201).send(chargeView(row, deps.clock.now()));
      },
    );

    app.get(
      '/cob/:txid',
      {
        schema: { ...common, operationId: 'getCharge', summary: 'A charge', params: TxidParams, response: { 200: Charge, ...errorResponses(400, 401, 404) } },
      },
      async (request) => chargeView(await getCharge(deps, request.accountId, request.params.txid), deps.clock.now()),
    );

    app.get(
      '/cob',
      {
        schema: {
          ...common,
          operationId: 'listCharges',
          summary: "List the account's charges created in an interval",
          description:
            'Newest first; `inicio` and `fim` at most 31 days apart. `status` matches the status the charge reads with now (an expired ATIVA ' +
            `one is REMOVIDA_PELO_PSP). ${LIST_LIMITS}`,
          querystring: ListQuery,
          response: { 200: ListResponse, ...errorResponses(400, 401, 429, 503) },
        },
      },
      async (request) => {
        const { parametros, rows, now } = await listChargesOf(deps, request.accountId, request.query);
        return { parametros, cobs: rows.map((row) => chargeView(row, now)) };
      },
    );

    app.patch(
      '/cob/:txid',
      {
        schema: {
          ...common,
          operationId: 'reviseCharge',
          summary: 'Revise or cancel an ATIVA charge',
          description:
            'Any field of the creation body; `status` REMOVIDA_PELO_USUARIO_RECEBEDOR cancels. Every change raises `revisao` by 1 and ' +
            'issues a new BR Code. A charge that is not ATIVA is 400.',
          params: TxidParams,
          body: RevisionBody,
          response: { 200: Charge, ...errorResponses(400, 401, 404, 415, 422) },
        },
      },
      async (request) => chargeView(await reviseCharge(deps, request.accountId, request.params.txid, request.body), deps.clock.now()),
    );

    app.get(
      '/cob/:txid/qrcode',
      {
        schema: {
          ...common,
          operationId: 'getChargeQrCode',
          summary: "The QR code image of a charge's BR Code",
          description: 'PNG (default, 300 px) or SVG, with error correction level M.',
          params: TxidParams,
          querystring: Type.Object({ format: Type.Optional(Type.Union([Type.Literal('png'), Type.Literal('svg')], { description: 'png (default) or svg' })) }, { additionalProperties: false }),
          response: { 200: QrImage, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        const image = await chargeQrCode(deps, request.accountId, request.params.txid, request.query.format ?? 'png');
        return reply.type(image.contentType).send(image.body);
      },
    );
  };

/** The default sandbox payer's CPF (valid check digits). */
export const SANDBOX_PAYER_CPF = '52998224725';

/** The payer of a sandbox payment: the one given, or a fixed sandbox payer. */
function sandboxPayer(given: { name: string; document: string; ispb?: string | undefined } | undefined) {
  if (!given) return { name: 'Sandbox Payer', document: SANDBOX_PAYER_CPF, ispb: SANDBOX_PAYER_ISPB, bankName: SANDBOX_PAYER_BANK };
  return { name: given.name, document: given.document, ispb: given.ispb ?? SANDBOX_PAYER_ISPB, bankName: given.ispb ? null : SANDBOX_PAYER_BANK };
}

const PayBody = Type.Object(
  {
    payer: Type.Optional(
      Type.Object(
        { name: Type.String({ minLength: 1, maxLength: 140 }), document: Type.String({ minLength: 11, maxLength: 18, description: 'CPF or CNPJ' }), ispb: Type.Optional(Type.String({ pattern: '^[0-9]{8}$' })) },
        { additionalProperties: false },
      ),
    ),
    accountId: Type.Optional(
      Type.Integer({ minimum: 1, description: 'The account whose charge is paid; needed when several accounts have a charge with this txid' }),
    ),
  },
  { additionalProperties: false },
);

/** Sandbox: a payer pays a charge (POST /sandbox/cob/{txid}/pay). */
export const sandboxChargeRoutes =
  (deps: ChargesDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    // The body is optional: no body, or an empty one sent as JSON, is a payment by the default payer.
    const json = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
      body === '' ? done(null, undefined) : json(request, body as string, done),
    );

    app.post(
      '/sandbox/cob/:txid/pay',
      {
        schema: {
          tags: ['Sandbox'],
          security: ADMIN_SECURITY,
          operationId: 'sandboxPayCharge',
          summary: 'A payer pays an ATIVA charge with its exact amount',
          description:
            'Without `payer`, a fixed sandbox payer pays. A txid is unique per account: when several accounts have a charge with it, ' +
            '`accountId` names which (else 409 TXID_AMBIGUOUS). A charge not ATIVA is 422.',
          params: TxidParams,
          body: PayBody,
          response: { 201: Type.Object({ endToEndId: Type.String(), transactionId: Type.Integer() }), ...errorResponses(400, 401, 404, 409, 415, 422) },
        },
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      async (request, reply) => {
        const now = deps.clock.now();
        const { accountId, payer } = request.body;
        const owner = accountId === undefined ? undefined : BigInt(accountId);
        const paid = await payCharge(deps, { txid: request.params.txid, accountId: owner, payer: sandboxPayer(payer), at: now, now });
        return reply.status(201).send(paid);
      },
    );
  };
