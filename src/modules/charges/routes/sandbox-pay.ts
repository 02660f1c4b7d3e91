import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses } from '../../../http/schemas.ts';
import { SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB } from '../../sandbox/service.ts';
import { payCharge, type ChargesDeps } from '../service.ts';
import { TxidParams } from './schemas.ts';

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
