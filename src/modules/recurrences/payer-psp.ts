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
import { receivePix } from '../settlement/service.ts';
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

export type SolicitationAnswer = { accept: true } | { reject: RecRejection };

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

/** The payer's PSP answers an instruction: the sandbox's first meets its faults, then every payer's rules. */
export async function answerCharge(trx: Trx, deps: PayerPspDeps, rec: RecurrenceRow, charge: RecurringChargeRow): Promise<ChargeAnswer> {
  if (!payerIsOurs(deps, rec)) {
    const fault = await deps.faults?.take('scheduling', trx);
    if (fault?.effect === 'late') return { late: true };
    if (fault?.effect === 'reject' && fault.reason !== null && isChargeRejection(fault.reason)) return { reject: fault.reason };
  }
  const refusal = chargeRefusal(rec, charge);
  return refusal === null ? { schedule: true } : { reject: refusal };
}

export type SettlementOutcome = { paid: { transactionId: bigint } } | { insufficient: true } | { reject: ChargeRejection };

/**
 * The payer's PSP settles an attempt. The sandbox's payer: unless a fault refuses it (AM04: no
 * funds), the money arrives from the network as a Pix received by the receiver, with the
 * attempt's end-to-end id and the charge's txid (the ledger, `cash_in`, the transaction views).
 */
export async function settleAttempt(
  trx: Trx,
  deps: PayerPspDeps,
  ctx: { rec: RecurrenceRow; charge: RecurringChargeRow; attempt: AttemptRow },
  at: Date,
): Promise<SettlementOutcome> {
  const { rec, charge, attempt } = ctx;
  const fault = payerIsOurs(deps, rec) ? null : await deps.faults?.take('attempt', trx);
  if (fault?.effect === 'reject' && fault.reason === INSUFFICIENT_FUNDS) return { insufficient: true };
  if (fault?.effect === 'reject' && fault.reason !== null && isChargeRejection(fault.reason)) return { reject: fault.reason };
  const refusal = chargeRefusal(rec, charge);
  if (refusal !== null) return { reject: refusal };
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
  return { paid: { transactionId: received.id } };
}
