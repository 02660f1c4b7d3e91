/**
 * What the shared cases of test/support/route-cases.ts need of each account operation, by
 * operationId: how to point it at a resource of account A (B must get 404 with `code`, A its
 * usual answer), and an input it refuses with 400 and `code`. Each starts from the operation's
 * request example in openapi.json. An operation with neither says why (`none`); one missing from
 * this table fails its test.
 */
import { randomUUID } from 'node:crypto';
import type { ErrorCode } from '../../src/http/error-codes.ts';
import type { AccountApi, OperatorApi } from '../../scripts/lib/api-client.ts';
import type { ArrivedPix } from '../../scripts/lib/api-types.ts';
import type { RequestChanges } from './route-cases.ts';

/** Account A's resources, made once before the cases run. */
export interface Owned {
  /** A's EVP key. */
  key: string;
  /** A PIX A received (R$ 100.00), refunded in part. */
  pix: ArrivedPix;
  /** A's charge. */
  txid: string;
  /** A's refund of `pix`. */
  refundId: string;
  /** A MED opened against another PIX A received. */
  medId: number;
  /**
   * Pix Automático with A as the payer (another institution's receiver asking): authorizations
   * PENDING (one for each case that answers one), one APPROVED to cancel, and another APPROVED
   * with a recurring charge it pays.
   */
  automatico: { pending: string[]; approved: string; charged: string; chargeId: number };
}

export interface Fixtures {
  owned: Owned;
  /** Account A's routes. */
  owner: AccountApi;
}

type Changes = (f: Fixtures) => RequestChanges | Promise<RequestChanges>;

export type ForeignCase = { none: string } | { request: Changes; code: ErrorCode; ownerStatus?: number };
export type InvalidCase = { none: string } | { request: Changes; code: ErrorCode };

export interface RouteFixture {
  foreign: ForeignCase;
  invalid: InvalidCase;
}

const PAYER = { name: 'Pagador Casos', document: '52998224725' };
const NO_PATH_PARAMETER = { none: 'no path parameter' };
const NO_INPUT = { none: 'no input' };
/** An interval longer than the 31 days a list may span. */
const LONG_INTERVAL = { startDate: '2026-01-01', endDate: '2026-11-24' };

async function make(owner: AccountApi, operator: OperatorApi, accountId: number): Promise<Owned> {
  const { key } = await operator.registerPixKey(accountId);
  const pix = await operator.incomingPix({ pixKey: key, amount: '100.00', payer: PAYER });
  const txid = `casos${randomUUID().replace(/-/g, '')}`.slice(0, 30);
  await owner.createCharge(txid, { calendario: { expiracao: 3600 }, valor: { original: '10.00' }, chave: key });
  const refundId = 'casos1';
  await owner.requestRefund(pix.endToEndId, refundId, { valor: '1.00' });
  const disputed = await operator.incomingPix({ pixKey: key, amount: '50.00', payer: PAYER });
  const { medId } = await operator.openMed({ endToEndId: disputed.endToEndId, reason: 'FRAUD' });
  return { key, pix, txid, refundId, medId, automatico: await payerOfAutomatico(owner, operator, accountId) };
}

/** A as the payer of Pix Automático: four recurrences asked of it, one approved with a charge sent in its window. */
async function payerOfAutomatico(owner: AccountApi, operator: OperatorApi, accountId: number): Promise<Owned['automatico']> {
  const now = await operator.advanceClock(1);
  const today = new Date(Date.parse(now.now) - 3 * 3_600_000).toISOString().slice(0, 10);
  const day = (n: number) => new Date(Date.parse(`${today}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
  const asked = [];
  for (let i = 0; i < 5; i++) {
    asked.push(await operator.askAuthorization({ payerAccountId: accountId, contract: `CASOS-${i}`, frequency: 'MENSAL', startDate: day(0), fixedAmount: '10.00' }));
  }
  // The solicitations reach A a moment later.
  await operator.advanceClock(5);
  const [approved, charged, ...pending] = asked.map((a) => a.idRec);
  await owner.approveAuthorization(approved!);
  await owner.approveAuthorization(charged!);
  const charge = await operator.sendRecurringCharge(charged!, { dueDate: day(5), amount: '10.00' });
  return { pending, approved: approved!, charged: charged!, chargeId: charge.id };
}

/** One of A's PENDING authorizations for each case that answers one. */
const pendingOfA = (index: number) => ({ owned }: Fixtures) => ({ params: { idRec: owned.automatico.pending[index]! } });

/** A fresh webhook registration of A (the case may delete it). */
const webhookOfA = async ({ owner }: Fixtures) => ({ params: { id: (await owner.registerWebhook({ url: `https://127.0.0.1:9/${randomUUID()}`, eventType: 'cash_out' })).id } });

const operations: Record<string, RouteFixture> = {
  getBalances: { foreign: NO_PATH_PARAMETER, invalid: NO_INPUT },
  getBalance: { foreign: NO_PATH_PARAMETER, invalid: NO_INPUT },
  createPixTransfer: {
    foreign: NO_PATH_PARAMETER,
    invalid: { request: () => ({ body: { pixKey: 'fornecedor@example.com', payment: { currency: 'BRL', amount: 0.001 } } }), code: 'INVALID_AMOUNT' },
  },
  getPixKey: {
    foreign: { none: 'the directory answers every account alike: a key is nobody’s resource' },
    invalid: { request: () => ({ params: { key: 'not a key' } }), code: 'INVALID_PIX_KEY' },
  },
  listTransactions: { foreign: NO_PATH_PARAMETER, invalid: { request: () => ({ params: LONG_INTERVAL }), code: 'INTERVAL_TOO_LONG' } },
  getTransaction: {
    foreign: { request: ({ owned }) => ({ params: { id: String(owned.pix.transactionId) } }), code: 'TRANSACTION_NOT_FOUND' },
    invalid: { none: 'any identifier is looked up, as an id or an externalId' },
  },
  listTransactionsByPixKey: {
    foreign: { none: "the key filters the account's own list: another account's key lists nothing" },
    invalid: { request: () => ({ params: { pixKey: 'not a key' } }), code: 'INVALID_PIX_KEY' },
  },
  getTransactionByPixKey: {
    foreign: { request: ({ owned }) => ({ params: { pixKey: owned.key, identifier: owned.pix.endToEndId } }), code: 'TRANSACTION_NOT_FOUND' },
    invalid: { request: () => ({ params: { pixKey: 'not a key' } }), code: 'INVALID_PIX_KEY' },
  },
  createCharge: {
    foreign: { none: "txids are per account: another account's txid is free" },
    invalid: { request: ({ owned }) => ({ body: { calendario: {}, valor: { original: '10.00' }, chave: owned.key, devedor: { cpf: '12345678900', nome: 'Maria' } } }), code: 'INVALID_CPF' },
  },
  getCharge: {
    foreign: { request: ({ owned }) => ({ params: { txid: owned.txid } }), code: 'CHARGE_NOT_FOUND' },
    invalid: { request: () => ({ params: { txid: 'short' } }), code: 'VALIDATION_FAILED' },
  },
  reviseCharge: {
    foreign: { request: ({ owned }) => ({ params: { txid: owned.txid } }), code: 'CHARGE_NOT_FOUND' },
    invalid: { request: ({ owned }) => ({ params: { txid: owned.txid }, body: {} }), code: 'EMPTY_REVISION' },
  },
  createChargeWithGeneratedTxid: {
    foreign: NO_PATH_PARAMETER,
    invalid: { request: ({ owned }) => ({ body: { calendario: {}, valor: { original: '10.00' }, chave: owned.key, devedor: { cpf: '12345678900', nome: 'Maria' } } }), code: 'INVALID_CPF' },
  },
  listCharges: {
    foreign: NO_PATH_PARAMETER,
    invalid: { request: () => ({ params: { inicio: '2026-01-01T00:00:00Z', fim: '2026-11-24T23:59:59Z' } }), code: 'INTERVAL_TOO_LONG' },
  },
  getChargeQrCode: {
    foreign: { request: ({ owned }) => ({ params: { txid: owned.txid } }), code: 'CHARGE_NOT_FOUND' },
    invalid: { request: ({ owned }) => ({ params: { txid: owned.txid, format: 'gif' } }), code: 'VALIDATION_FAILED' },
  },
  requestRefund: {
    foreign: { request: ({ owned }) => ({ params: { e2eid: owned.pix.endToEndId, id: `casos${randomUUID().slice(0, 8)}` }, body: { valor: '1.00' } }), code: 'TRANSACTION_NOT_FOUND' },
    invalid: { request: ({ owned }) => ({ params: { e2eid: owned.pix.endToEndId, id: 'casosinvalido' }, body: { valor: '0.00' } }), code: 'INVALID_VALUE' },
  },
  getRefund: {
    foreign: { request: ({ owned }) => ({ params: { e2eid: owned.pix.endToEndId, id: owned.refundId } }), code: 'REFUND_NOT_FOUND' },
    invalid: { request: ({ owned }) => ({ params: { e2eid: 'short', id: owned.refundId } }), code: 'VALIDATION_FAILED' },
  },
  listMeds: { foreign: NO_PATH_PARAMETER, invalid: { request: () => ({ params: LONG_INTERVAL }), code: 'INTERVAL_TOO_LONG' } },
  getMed: {
    foreign: { request: ({ owned }) => ({ params: { id: String(owned.medId) } }), code: 'MED_NOT_FOUND' },
    invalid: { request: () => ({ params: { id: 'abc' } }), code: 'VALIDATION_FAILED' },
  },
  registerWebhook: {
    foreign: NO_PATH_PARAMETER,
    invalid: { request: () => ({ body: { url: 'http://erp.example.com/pix', eventType: 'cash_in' } }), code: 'INVALID_WEBHOOK_URL' },
  },
  listWebhooks: { foreign: NO_PATH_PARAMETER, invalid: NO_INPUT },
  updateWebhook: {
    foreign: { request: webhookOfA, code: 'WEBHOOK_NOT_FOUND' },
    invalid: { request: async (f) => ({ ...(await webhookOfA(f)), body: { headers: { host: 'example.com' } } }), code: 'BLOCKED_HEADER' },
  },
  deleteWebhook: {
    foreign: { request: webhookOfA, code: 'WEBHOOK_NOT_FOUND' },
    invalid: { request: () => ({ params: { id: 'abc' } }), code: 'VALIDATION_FAILED' },
  },
  getWebhookSigningSecret: { foreign: NO_PATH_PARAMETER, invalid: NO_INPUT },
  rotateWebhookSigningSecret: { foreign: NO_PATH_PARAMETER, invalid: NO_INPUT },
  listWebhookLogs: {
    foreign: NO_PATH_PARAMETER,
    invalid: { request: () => ({ params: { startDate: '2026-11-24', endDate: '2026-11-01' } }), code: 'INVALID_INTERVAL' },
  },
  listAutomaticoAuthorizations: { foreign: NO_PATH_PARAMETER, invalid: { request: () => ({ params: { status: 'ACTIVE' } }), code: 'VALIDATION_FAILED' } },
  approveAutomaticoCode: {
    foreign: { none: "a code is approved by whoever presents it; another account's recurrence is the receiver's, not a resource of the payer" },
    invalid: { request: () => ({ body: { pixCopiaECola: '0002012658...', maximumAmount: '10.00' } }), code: 'VALIDATION_FAILED' },
  },
  getAutomaticoAuthorization: {
    foreign: { request: ({ owned }) => ({ params: { idRec: owned.automatico.charged } }), code: 'AUTHORIZATION_NOT_FOUND' },
    invalid: { request: () => ({ params: { idRec: 'RX1' } }), code: 'VALIDATION_FAILED' },
  },
  approveAutomaticoAuthorization: {
    foreign: { request: pendingOfA(0), code: 'AUTHORIZATION_NOT_FOUND' },
    invalid: { request: async (f) => ({ ...pendingOfA(1)(f), body: { maximumAmount: 20 } }), code: 'MAXIMUM_NOT_ALLOWED' },
  },
  rejectAutomaticoAuthorization: {
    foreign: { request: pendingOfA(2), code: 'AUTHORIZATION_NOT_FOUND' },
    invalid: { request: () => ({ params: { idRec: 'not-an-idrec' } }), code: 'VALIDATION_FAILED' },
  },
  cancelAutomaticoAuthorization: {
    // Its owner's answer: the approved one, cancelled (its charge with it).
    foreign: { request: ({ owned }) => ({ params: { idRec: owned.automatico.approved } }), code: 'AUTHORIZATION_NOT_FOUND', ownerStatus: 200 },
    invalid: { request: () => ({ params: { idRec: 'not-an-idrec' } }), code: 'VALIDATION_FAILED' },
  },
  listAutomaticoCharges: { foreign: NO_PATH_PARAMETER, invalid: { request: () => ({ params: { size: 101 } }), code: 'VALIDATION_FAILED' } },
  getAutomaticoCharge: {
    foreign: { request: ({ owned }) => ({ params: { id: String(owned.automatico.chargeId) } }), code: 'RECURRING_CHARGE_NOT_FOUND' },
    invalid: { request: () => ({ params: { id: 'abc' } }), code: 'VALIDATION_FAILED' },
  },
  cancelAutomaticoCharge: {
    foreign: { request: ({ owned }) => ({ params: { id: String(owned.automatico.chargeId) } }), code: 'RECURRING_CHARGE_NOT_FOUND' },
    invalid: { request: () => ({ params: { id: '0' } }), code: 'VALIDATION_FAILED' },
  },
  resendWebhook: {
    foreign: {
      request: ({ owned }) => ({ params: { transactionIdentifier: owned.pix.endToEndId }, body: { url: 'https://127.0.0.1:9/replay' } }),
      code: 'TRANSACTION_NOT_FOUND',
    },
    invalid: { request: ({ owned }) => ({ params: { transactionIdentifier: owned.pix.endToEndId }, body: { url: 'http://erp.example.com/replay' } }), code: 'INVALID_WEBHOOK_URL' },
  },
};

export const ROUTE_FIXTURES = { make, operations };
