import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, Nullable, Timestamp } from '../../http/schemas.ts';
import { common, Decimal2, DocumentField, Ispb, Name } from '../sandbox/routes/schemas.ts';
import { payerAgent } from './fetch.ts';
import { payBrCode, type PayerDeps } from './service.ts';

const PayBody = Type.Object(
  {
    pixCopiaECola: Type.String({ minLength: 1, maxLength: 512, description: 'A static or dynamic BR Code' }),
    payer: Type.Object({ name: Name, document: DocumentField, ispb: Type.Optional(Ispb) }, { additionalProperties: false }),
    amount: Type.Optional(Decimal2('The amount, where the code lets the payer choose it ("10.00")')),
    paidAt: Type.Optional(Timestamp('Back-dates the payment (default: now); a cobv is fetched for its day in São Paulo')),
  },
  { additionalProperties: false },
);

const Paid = Type.Object({
  endToEndId: Type.String(),
  transactionId: Nullable(Type.Integer({ description: 'The received Pix; null when the receiver is at another institution (nothing is credited here)' })),
  amount: Type.String({ description: 'The amount paid, "10.00"' }),
  txid: Nullable(Type.String()),
});

/** Sandbox: a payer's institution pays a BR Code (POST /sandbox/payer/pay). */
export const payerRoutes =
  (deps: Omit<PayerDeps, 'agent'>): FastifyPluginAsyncTypebox =>
  async (app) => {
    const agent = payerAgent();
    app.addHook('onClose', () => agent.close());
    const payer: PayerDeps = { ...deps, agent };
    app.post(
      '/sandbox/payer/pay',
      {
        schema: {
          ...common,
          operationId: 'sandboxPayerPay',
          summary: "A payer's institution pays a static or dynamic BR Code",
          description:
            'Parses the code (CRC, structure). A static code pays its key the code\'s amount (or `amount` when it has none). A dynamic code is ' +
            "fetched at its location, its JWS verified (alg, jku on the location's host, x5t, chain up to a trusted root, signature) and its " +
            'payload checked (ATIVA, not expired, cobv within its validity) before the amount due is paid; `amount` only where ' +
            '`modalidadeAlteracao` is 1. A key of another institution is paid without crediting anything here (`transactionId` null). ' +
            'Every refusal is 422 with the failed check as `code`, and credits nothing.',
          body: PayBody,
          response: { 201: Paid, ...errorResponses(400, 401, 404, 422) },
        },
      },
      async (request, reply) => reply.status(201).send(await payBrCode(payer, request.body)),
    );
  };
