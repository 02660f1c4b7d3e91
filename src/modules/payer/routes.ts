import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, Nullable, StringEnum, Timestamp } from '../../http/schemas.ts';
import { common, Decimal2, DocumentField, Ispb, Name } from '../sandbox/routes/schemas.ts';
import { PayerConnections } from './fetch.ts';
import { payBrCode, signingRootsOf, type PayerDeps } from './service.ts';

const PayBody = Type.Object(
  {
    pixCopiaECola: Type.String({ minLength: 1, maxLength: 512, description: 'A static or dynamic BR Code' }),
    payer: Type.Object({ name: Name, document: DocumentField, ispb: Type.Optional(Ispb) }, { additionalProperties: false }),
    amount: Type.Optional(Decimal2('The amount paid, where the code lets the payer choose it ("10.00"); for a Pix Troco, the purchase plus the change')),
    paidAt: Type.Optional(
      Timestamp("Back-dates the payment (default: now); a cobv's location is asked for today (it serves no past day) and the cobv paid what it asked on paidAt's day in São Paulo"),
    ),
    recurrence: Type.Optional(
      Type.Object(
        {
          decision: Type.Optional(
            StringEnum(['approve', 'decline'] as const, {
              description: "A code of Pix Automático: approve its recurrence (default), or for a composite code pay its charge only",
            }),
          ),
          valorMaximo: Type.Optional(Decimal2("The payer's maximum per charge, where the recurrence fixes no amount (not under its valorMinimoRecebedor)")),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const Paid = Type.Object({
  endToEndId: Nullable(Type.String({ description: 'null for a recurrence\'s code alone (journey 2): nothing is paid' })),
  transactionId: Nullable(Type.Integer({ description: 'The received Pix; null when the receiver is at another institution (nothing is credited here), or nothing was paid' })),
  amount: Nullable(Type.String({ description: 'The amount paid, "10.00"' })),
  txid: Nullable(Type.String()),
  recurrence: Type.Optional(
    Type.Object(
      { idRec: Type.String(), status: Type.String({ description: 'APROVADA' }), tipoJornada: Type.String({ description: 'JORNADA_2, JORNADA_3 or JORNADA_4' }) },
      { description: 'A code of Pix Automático: the recurrence approved, and by which journey' },
    ),
  ),
});

/** Sandbox: a payer's institution pays a BR Code (POST /sandbox/payer/pay). */
export const payerRoutes =
  (deps: Omit<PayerDeps, 'connections' | 'signingRoots'> & { qrSigning?: { chainFile: string } | undefined; tlsCertFile?: string | undefined }): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { qrSigning, tlsCertFile, ...rest } = deps;
    const connections = new PayerConnections({ publicUrl: deps.publicUrl, tlsCertFile });
    app.addHook('onClose', () => connections.close());
    const payer: PayerDeps = { ...rest, connections, signingRoots: signingRootsOf(qrSigning) };
    app.post(
      '/sandbox/payer/pay',
      {
        schema: {
          ...common,
          operationId: 'sandboxPayerPay',
          summary: "A payer's institution pays a static or dynamic BR Code",
          description:
            'Parses the code (CRC, structure). A static code pays its key the code\'s amount (or `amount` when it has none), carrying its txid: ' +
            'it pays the account\'s charge of that txid when one is ATIVA, and is otherwise a Pix with that txid. A dynamic code is ' +
            "fetched at its location, its JWS verified (alg, jku on the location's host, x5t, chain up to a trusted root, signature) and its " +
            'payload checked (ATIVA, not expired, cobv within its validity) before the amount due is paid: `valor.original`, plus a Pix ' +
            "Saque's or Pix Troco's `valor.retirada`; `amount` only where `modalidadeAlteracao` (or the withdrawal's or change's) is 1. " +
            'A location answering 404/410 `CobPayloadNaoEncontrado` is `CHARGE_NOT_ACTIVE` (`CHARGE_EXPIRED` for an expired charge of this ' +
            'service). A key of another institution is paid without crediting anything here (`transactionId` null). ' +
            "A code of Pix Automático (field 80) is read as a payer's app reads it: the recurrence's location is fetched and its JWS verified " +
            "exactly as a charge's, and the recurrence approved by the payer (its document and PSP, `payer.ispb`, default the sandbox's): " +
            "a recurrence's code alone is journey 2 (nothing is paid); a composite code of a cob is paid and approves it by journey 3 " +
            "(`dadosJornada.txid`), of a cobv or a static code by journey 4; `recurrence.decision: decline` pays a composite code's charge only. " +
            'A recurrence that is not CRIADA is `RECURRENCE_NOT_APPROVABLE`, and then a composite code pays nothing either. ' +
            'Every refusal is 422 with the failed check as `code`, and credits nothing.',
          body: PayBody,
          response: { 201: Paid, ...errorResponses(400, 401, 404, 422) },
        },
      },
      async (request, reply) => reply.status(201).send(await payBrCode(payer, request.body)),
    );
  };
