/**
 * The payer's PSP of Pix Automático: what it answers to a recurring charge's instruction
 * (schedule it, or refuse it with a catalog code) and what happens when it settles an attempt.
 * One set of rules for every payer: the sandbox's payer PSP plays a payer at another institution
 * (its money arrives from the network; Pix Automático faults make it refuse, or not answer), and
 * this service is the payer's PSP for its own account holders. Decision:
 * docs/decisions/0048-pix-automatico-cycle.md.
 */
import type { Trx } from '../../db/client.ts';
import type { FaultStage } from '../../db/schema.ts';
import { findAccount } from '../accounts/repo.ts';
import type { Counterpart } from '../settlement/repo.ts';
import { debitNow, holderCounterpart, receivePix } from '../settlement/service.ts';
import { SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB } from '../sandbox/service.ts';
import { INSUFFICIENT_FUNDS, isChargeRejection, isRecRejection, type ChargeRejection, type RecRejection } from './catalog.ts';
import type { AttemptRow, RecurrenceRow, RecurringChargeRow } from './rows.ts';

/** A Pix Automático fault of the sandbox, used up as it acts (modules/controls). */
export interface AutomaticoFault {
  readonly id: bigint;
  readonly effect: 'reject' | 'late';
  readonly reason: string | null;
}

/** The sandbox's Pix Automático faults: the next one of a stage, used up (null: none, or production). */
export interface AutomaticoFaults {
  take(stage: FaultStage, trx: Trx): Promise<AutomaticoFault | null>;
}

export interface PayerPspDeps {
  /** This institution's ISPB: a payer at it is an account holder of this service. */
  readonly ispb: string;
  readonly faults?: AutomaticoFaults | undefined;
}

/** Whether the recurrence's payer is at this institution (its account holder) rather than another one. */
export const payerIsOurs = (deps: Pick<PayerPspDeps, 'ispb'>, rec: Pick<RecurrenceRow, 'pagador'>): boolean => rec.pagador?.ispbParticipante === deps.ispb;

/** A payer's answer to a solicitation: accepted (with its maximum per charge, where the recurrence fixes no amount) or rejected. */
export type SolicitationAnswer = { accept: true; maximoCentavos?: bigint | null } | { reject: RecRejection };

/** The sandbox payer's answer to a solicitation: it accepts, unless a fault makes it refuse (AP13, AP14). */
export async function sandboxSolicitationAnswer(trx: Trx, deps: PayerPspDeps): Promise<SolicitationAnswer> {
  const fault = await deps.faults?.take('solicitation', trx);
  if (fault?.effect === 'reject' && fault.reason !== null && isRecRejection(fault.reason)) return { reject: fault.reason };
  if (fault?.effect === 'reject') return { reject: 'AP14' };
  return { accept: true };
}

export type ChargeAnswer = { schedule: true } | { reject: ChargeRejection } | { late: true };

/**
 * The rules a payer's PSP checks of an instruction, for any payer: the recurrence approved, the
 * fixed amount, the payer's maximum, the recurrence's last day.
 */
export function chargeRefusal(rec: RecurrenceRow, charge: Pick<RecurringChargeRow, 'amount_centavos' | 'due_date'>): ChargeRejection | null {
  if (rec.status !== 'APROVADA') return 'MSUC';
  if (rec.valor_rec_centavos !== null && charge.amount_centavos !== rec.valor_rec_centavos) return 'AM09';
  if (rec.valor_maximo_pagador_centavos !== null && charge.amount_centavos > rec.valor_maximo_pagador_centavos) return 'AM02';
  if (rec.data_final !== null && charge.due_date > rec.data_final) return 'DTED';
  return null;
}

/**
 * What this institution refuses for its own account holder, besides every payer's rules: an
 * account closed (AC05) or blocked (AC06), or one whose document is not the recurrence's payer's
 * (DENC).
 */
async function holderRefusal(trx: Trx, rec: RecurrenceRow): Promise<ChargeRejection | null> {
  const account = rec.payer_account_id === null ? undefined : await findAccount(trx, rec.payer_account_id);
  if (!account || account.status === 'CLOSED') return 'AC05';
  if (account.status === 'BLOCKED') return 'AC06';
  const document = rec.pagador?.cpf ?? rec.pagador?.cnpj;
  if (document !== undefined && document !== account.document) return 'DENC';
  return null;
}

/** The payer's PSP's refusal of an instruction or an attempt, if any: for its own holder, the holder's rules first. */
async function refusalOf(trx: Trx, deps: PayerPspDeps, rec: RecurrenceRow, charge: RecurringChargeRow): Promise<ChargeRejection | null> {
  if (payerIsOurs(deps, rec)) {
    const refusal = await holderRefusal(trx, rec);
    if (refusal !== null) return refusal;
  }
  return chargeRefusal(rec, charge);
}

/** The payer's PSP answers an instruction: the sandbox's first meets its faults, then every payer's rules. */
export async function answerCharge(trx: Trx, deps: PayerPspDeps, rec: RecurrenceRow, charge: RecurringChargeRow): Promise<ChargeAnswer> {
  if (!payerIsOurs(deps, rec)) {
    const fault = await deps.faults?.take('scheduling', trx);
    if (fault?.effect === 'late') return { late: true };
    if (fault?.effect === 'reject' && fault.reason !== null && isChargeRejection(fault.reason)) return { reject: fault.reason };
  }
  const refusal = await refusalOf(trx, deps, rec, charge);
  return refusal === null ? { schedule: true } : { reject: refusal };
}

/**
 * A paid attempt: the receiver's PAYMENT (null for a receiver at another institution) and, for a
 * payer here, its Pix out.
 */
export type SettlementOutcome = { paid: { transactionId: bigint | null; debitTransactionId: bigint | null } } | { insufficient: true } | { reject: ChargeRejection };

/**
 * The payer's PSP settles an attempt. The sandbox's payer: unless a fault refuses it (AM04: no
 * funds), the money arrives from the network as a Pix received by the receiver, with the
 * attempt's end-to-end id and the charge's txid (the ledger, `cash_in`, the transaction views).
 * An account holder here: its `available` pays, now, as a Pix out with the attempt's end-to-end
 * id, to the receiver's account here or to the network for another institution's; without the
 * money, nothing moves.
 */
export async function settleAttempt(
  trx: Trx,
  deps: PayerPspDeps,
  ctx: { rec: RecurrenceRow; charge: RecurringChargeRow; attempt: AttemptRow },
  at: Date,
): Promise<SettlementOutcome> {
  const { rec, charge, attempt } = ctx;
  const ours = payerIsOurs(deps, rec);
  const fault = ours ? null : await deps.faults?.take('attempt', trx);
  if (fault?.effect === 'reject' && fault.reason === INSUFFICIENT_FUNDS) return { insufficient: true };
  if (fault?.effect === 'reject' && fault.reason !== null && isChargeRejection(fault.reason)) return { reject: fault.reason };
  const refusal = await refusalOf(trx, deps, rec, charge);
  if (refusal !== null) return { reject: refusal };
  if (ours) return debitHolder(trx, deps, ctx, at);
  if (charge.account_id === null) throw new Error(`recurring charge ${charge.id}: neither its receiver nor its payer is an account of this service`);
  const ispb = rec.pagador?.ispbParticipante ?? SANDBOX_PAYER_ISPB;
  const document = rec.pagador?.cpf ?? rec.pagador?.cnpj ?? rec.devedor_document;
  const received = await receivePix(trx, {
    accountId: charge.account_id,
    amountCentavos: charge.amount_centavos,
    endToEndId: attempt.end_to_end_id,
    pixKey: null,
    txid: charge.txid,
    description: null,
    originalTransactionId: null,
    counterpart: {
      name: rec.pagador?.nome ?? rec.devedor_nome,
      document,
      ispb,
      bankName: ispb === SANDBOX_PAYER_ISPB ? SANDBOX_PAYER_BANK : null,
      branch: null,
      account: null,
      accountId: null,
    },
    at,
    now: at,
  });
  return { paid: { transactionId: received.id, debitTransactionId: null } };
}

async function debitHolder(trx: Trx, deps: PayerPspDeps, ctx: { rec: RecurrenceRow; charge: RecurringChargeRow; attempt: AttemptRow }, at: Date): Promise<SettlementOutcome> {
  const { rec, charge, attempt } = ctx;
  const payerAccountId = rec.payer_account_id!;
  const receiver: Counterpart =
    charge.account_id !== null
      ? await holderCounterpart(trx, deps.ispb, charge.account_id)
      : {
          name: rec.recebedor_nome,
          document: rec.recebedor_cnpj,
          ispb: rec.recebedor_externo?.ispbParticipante ?? null,
          bankName: null,
          branch: charge.recebedor.agencia ?? null,
          account: charge.recebedor.conta,
          accountId: null,
        };
  const result = await debitNow(trx, {
    payerAccountId,
    amountCentavos: charge.amount_centavos,
    endToEndId: attempt.end_to_end_id,
    txid: charge.txid,
    description: charge.info_adicional,
    payer: await holderCounterpart(trx, deps.ispb, payerAccountId),
    receiver,
    now: at,
  });
  if ('insufficient' in result) return { insufficient: true };
  return { paid: { transactionId: result.payment?.id ?? null, debitTransactionId: result.withdraw.id } };
}
