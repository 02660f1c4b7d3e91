import { AppError, badRequest, conflict, notFound, unprocessable } from '../../http/errors.ts';
import { documentType, normalizeDocument } from '../../lib/document.ts';
import { pixIdentifier } from '../../lib/ids.ts';
import { parseDecimal2 } from '../../lib/money.ts';
import { enqueue } from '../notifications/repo.ts';
import { refundPayload } from '../notifications/payloads.ts';
import { payCharge } from '../charges/service.ts';
import { receiveFromNetwork, receivePix, settleDue, type SettlementDeps } from '../settlement/service.ts';
import { findKey, insertKey } from '../directory/repo.ts';
import { requirePixKey } from '../directory/service.ts';
import * as repo from './repo.ts';

export type SandboxDeps = SettlementDeps;

/** The institution a sandbox payer banks with, when the call does not say. */
export const SANDBOX_PAYER_ISPB = '12345678';
export const SANDBOX_PAYER_BANK = 'Sandbox Payer Bank';

function document(raw: string, field: string): string {
  const value = normalizeDocument(raw);
  if (!documentType(value)) throw badRequest('INVALID_DOCUMENT', `${field} must be a valid CPF or CNPJ`);
  return value;
}

function amount(raw: string): bigint {
  const centavos = parseDecimal2(raw);
  if (centavos === null || centavos <= 0n) throw badRequest('INVALID_AMOUNT', 'amount must be a decimal string with 2 places, greater than 0 ("10.00")');
  return centavos;
}

export interface ExternalKeyInput {
  key: string;
  name: string;
  document: string;
  ispb: string;
  bankName?: string | undefined;
  branch?: string | undefined;
  accountNumber?: string | undefined;
  behavior?: 'reject' | 'timeout' | undefined;
}

/** A key held at another institution, so that transfers to it can be simulated. */
export async function registerExternalKey(deps: SandboxDeps, input: ExternalKeyInput) {
  const { key, type } = requirePixKey(input.key, 'key');
  const owner = document(input.document, 'document');
  if ((type === 'CPF' || type === 'CNPJ') && key !== owner) throw badRequest('INVALID_PIX_KEY', `a ${type} key must be its holder's document`);
  if (input.ispb === deps.ispb) throw badRequest('OWN_ISPB', 'keys of this institution are registered through POST /admin/accounts/{id}/pix-keys');
  const inserted = await insertKey(deps.db, {
    key,
    type,
    accountId: null,
    name: input.name,
    document: owner,
    ispb: input.ispb,
    bankName: input.bankName ?? null,
    branch: input.branch ?? null,
    accountNumber: input.accountNumber ?? null,
    behavior: input.behavior ?? null,
  });
  if (!inserted) throw conflict('PIX_KEY_EXISTS', 'This key is already registered in the directory');
  return { key, type: type.toLowerCase(), ispb: input.ispb, behavior: input.behavior ?? null };
}

export interface IncomingPixInput {
  pixKey: string;
  amount: string;
  /** behavior 'reject': the payer's institution refuses refunds of this PIX (they end NAO_REALIZADO). */
  payer: { name: string; document: string; ispb?: string | undefined; behavior?: 'reject' | undefined };
  txid?: string | undefined;
  /**
   * What `txid` is: 'charge' (the default, POST /sandbox/pix/incoming) names a charge of the
   * account, which the PIX pays under its rules; 'code' is the txid a payer read from a static
   * BR Code that names no charge of the account: only carried by the PIX (a receiver may give any
   * txid of 1 to 35 characters to its codes). A charge made with it meanwhile is paid.
   */
  txidOf?: 'charge' | 'code' | undefined;
  receivedAt?: string | undefined;
  description?: string | undefined;
}

/** The refusal of a charge payment after which the txid of a static code is only carried: no such charge. */
const NO_ACTIVE_CHARGE: readonly string[] = ['CHARGE_NOT_FOUND'];

/** A PIX arrives from another institution to the account owning `pixKey`, carrying `txid` when given. */
export async function receiveIncomingPix(deps: SandboxDeps, input: IncomingPixInput) {
  const { key: receiverKey } = requirePixKey(input.pixKey, 'pixKey');
  const centavos = amount(input.amount);
  const payerDocument = document(input.payer.document, 'payer.document');
  const now = deps.clock.now();
  const receivedAt = input.receivedAt ? new Date(input.receivedAt) : now;
  if (Number.isNaN(receivedAt.getTime()) || receivedAt.getTime() > now.getTime()) {
    throw badRequest('INVALID_RECEIVED_AT', 'receivedAt must be a timestamp that is not in the future');
  }
  const key = await findKey(deps.db, receiverKey);
  if (!key?.account_id) throw unprocessable('PIX_KEY_NOT_FOUND', 'PIX key not found among the keys of this institution');
  const accountId = key.account_id;
  const payerIspb = input.payer.ispb ?? SANDBOX_PAYER_ISPB;
  if (input.txid !== undefined) {
    // A charge payment, of the charge with this txid of the key's account (txids are unique per
    // account): checked (ATIVA at receivedAt, amount) and concluded with the credit.
    try {
      return await payCharge(deps, {
        txid: input.txid,
        accountId,
        amountCentavos: centavos,
        payer: {
          name: input.payer.name,
          document: payerDocument,
          ispb: payerIspb,
          bankName: input.payer.ispb ? null : SANDBOX_PAYER_BANK,
          behavior: input.payer.behavior,
        },
        description: input.description ?? null,
        at: receivedAt,
        now,
      });
    } catch (error) {
      if (input.txidOf !== 'code' || !(error instanceof AppError) || !NO_ACTIVE_CHARGE.includes(error.code)) throw error;
    }
  }
  const endToEndId = pixIdentifier('E', payerIspb, receivedAt);
  const received = await deps.db.transaction().execute((trx) =>
    receivePix(trx, {
      accountId,
      amountCentavos: centavos,
      endToEndId,
      pixKey: key.key,
      txid: input.txid ?? null,
      description: input.description ?? null,
      originalTransactionId: null,
      counterpart: {
        name: input.payer.name,
        document: payerDocument,
        ispb: payerIspb,
        bankName: input.payer.ispb ? null : SANDBOX_PAYER_BANK,
        branch: null,
        account: null,
        accountId: null,
      },
      counterpartBehavior: input.payer.behavior ?? null,
      at: receivedAt,
      now,
    }),
  );
  return { endToEndId, transactionId: Number(received.id) };
}

/** The receiver of one of our transfers sends (part of) it back. */
export async function receiveIncomingRefund(deps: SandboxDeps, input: { endToEndId: string; amount: string }) {
  const centavos = amount(input.amount);
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const original = await repo.lockSentTransfer(trx, input.endToEndId);
    if (!original) throw notFound('TRANSFER_NOT_FOUND', 'No transfer of this institution has that endToEndId');
    if (original.counterpart_account_id !== null) {
      throw unprocessable('INTERNAL_TRANSFER', 'The receiver is an account of this institution: it refunds through PUT /pix/{e2eid}/devolucao/{id}');
    }
    if (original.status !== 'CONFIRMED') throw unprocessable('TRANSFER_NOT_SETTLED', 'Only a settled transfer can be refunded');
    const refunded = await repo.refundedSoFar(trx, original.id);
    if (refunded + centavos > original.amount_centavos) {
      throw unprocessable('REFUND_EXCEEDS_ORIGINAL', 'The refunds would exceed the amount of the original transfer');
    }
    const rtrId = pixIdentifier('D', original.counterpart_ispb ?? SANDBOX_PAYER_ISPB, now);
    const refund = await receiveFromNetwork(trx, {
      type: 'REFUND_OUT',
      accountId: original.account_id,
      amountCentavos: centavos,
      endToEndId: rtrId,
      pixKey: original.pix_key,
      txid: null,
      description: null,
      originalTransactionId: original.id,
      counterpart: {
        name: original.counterpart_name,
        document: original.counterpart_document,
        ispb: original.counterpart_ispb,
        bankName: original.counterpart_bank_name,
        branch: original.counterpart_branch,
        account: original.counterpart_account,
        accountId: null,
      },
      at: now,
      now,
    });
    await enqueue(trx, {
      accountId: original.account_id,
      eventType: 'refund_out',
      transactionId: refund.id,
      payload: refundPayload(original, refund, 'CREDIT'),
      now,
    });
    return { endToEndId: rtrId, transactionId: Number(refund.id) };
  });
}

export function settleNow(deps: SandboxDeps) {
  return settleDue(deps, { force: true });
}
