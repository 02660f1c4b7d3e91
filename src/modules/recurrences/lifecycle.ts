/**
 * How a recurrence's life moves, once for every side and journey: approved by its payer (journey
 * 1 through a solicitation, 2 to 4 through a code), rejected, expired, or cancelled by either
 * user or PSP. Each change is one statement that appends to its history, closes what the change
 * ends (a solicitation under way, recurring charges not yet settled) and writes the receiver's
 * callback (`POST {webhookrec}/rec`) in the same transaction.
 */
import { sql } from 'kysely';
import type { RecJornada } from '../../db/schema.ts';
import type { Trx } from '../../db/client.ts';
import { CHARGE_CANCELLATIONS, REC_CANCELLATIONS, REC_REJECTIONS, type ChargeCancellation, type RecCancellation, type RecRejection, type Solicitante } from './catalog.ts';
import { recurrenceCallback, recurringChargeCallback } from './callbacks.ts';
import { notifyPayerCharge } from './payer-events.ts';
import { selectRecurrences, type RecurrenceRow } from './rows.ts';

/** A history entry appended in the statement that changes the status. */
export const appended = (status: string, at: Date) => sql<never>`history || ${JSON.stringify([{ status, data: at.toISOString() }])}::jsonb`;

/** The payer that approves: its document, its PSP, and when it is an account holder here, its account. */
export interface Approver {
  jornada: Exclude<RecJornada, 'AGUARDANDO_DEFINICAO'>;
  pagador: { cpf?: string | undefined; cnpj?: string | undefined; nome?: string | undefined; ispbParticipante: string; codMun?: string | undefined };
  payerAccountId?: bigint | null | undefined;
  /** The payer's maximum per charge (centavos), where the recurrence has no fixed amount. */
  maximoCentavos?: bigint | null | undefined;
  /** Journey 3: the immediate charge paid in the same act. */
  txid?: string | undefined;
}

async function reread(trx: Trx, id: bigint): Promise<RecurrenceRow> {
  return selectRecurrences(trx).where('recurrences.id', '=', id).executeTakeFirstOrThrow();
}

/**
 * The recurrence becomes APROVADA by `approver`'s journey. `dadosJornada.txid` stays for journey 3
 * only (BCB: removed by the receiver's PSP when another journey activates it); a solicitation
 * still under way is cancelled, the recurrence having been approved by another journey.
 */
export async function approveRecurrence(trx: Trx, row: RecurrenceRow, approver: Approver, at: Date): Promise<RecurrenceRow> {
  const pagador = Object.fromEntries(Object.entries(approver.pagador).filter(([, v]) => v !== undefined)) as Record<string, string>;
  await trx
    .updateTable('recurrences')
    .set({
      status: 'APROVADA',
      jornada: approver.jornada,
      jornada_txid: approver.jornada === 'JORNADA_3' ? (approver.txid ?? row.jornada_txid) : null,
      pagador: JSON.stringify(pagador),
      payer_account_id: approver.payerAccountId ?? null,
      valor_maximo_pagador_centavos: approver.maximoCentavos ?? null,
      history: appended('APROVADA', at),
      updated_at: at,
    })
    .where('id', '=', row.id)
    .execute();
  if (approver.jornada !== 'JORNADA_1') await closeSolicitations(trx, row.id, 'CANCELADA', at);
  const approved = await reread(trx, row.id);
  await recurrenceCallback(trx, approved, at);
  return approved;
}

/** The payer refused it (AP13: did not recognise it; AP14: rejected it). */
export async function rejectRecurrence(trx: Trx, row: RecurrenceRow, codigo: RecRejection, at: Date): Promise<RecurrenceRow> {
  await trx
    .updateTable('recurrences')
    .set({ status: 'REJEITADA', encerramento: JSON.stringify({ rejeicao: { codigo, descricao: REC_REJECTIONS[codigo] } }), history: appended('REJEITADA', at), updated_at: at })
    .where('id', '=', row.id)
    .execute();
  const rejected = await reread(trx, row.id);
  await recurrenceCallback(trx, rejected, at);
  return rejected;
}

/** No payer answered its solicitation in time. */
export async function expireRecurrence(trx: Trx, row: RecurrenceRow, at: Date): Promise<RecurrenceRow> {
  await trx.updateTable('recurrences').set({ status: 'EXPIRADA', history: appended('EXPIRADA', at), updated_at: at }).where('id', '=', row.id).execute();
  const expired = await reread(trx, row.id);
  await recurrenceCallback(trx, expired, at);
  return expired;
}

/**
 * Either side ends it. Its solicitation under way is cancelled, and so is every recurring charge
 * not yet settled (code CCLD: the authorization was cancelled), with their attempts.
 */
export async function cancelRecurrence(trx: Trx, row: RecurrenceRow, by: { solicitante: Solicitante; codigo: RecCancellation }, at: Date): Promise<RecurrenceRow> {
  const encerramento = { cancelamento: { solicitante: by.solicitante, codigo: by.codigo, descricao: REC_CANCELLATIONS[by.codigo] } };
  await trx
    .updateTable('recurrences')
    .set({ status: 'CANCELADA', encerramento: JSON.stringify(encerramento), history: appended('CANCELADA', at), updated_at: at })
    .where('id', '=', row.id)
    .execute();
  await closeSolicitations(trx, row.id, 'CANCELADA', at);
  const open = await trx
    .selectFrom('recurring_charges')
    .select('id')
    .where('recurrence_id', '=', row.id)
    .where('status', 'in', ['CRIADA', 'ATIVA'])
    .forUpdate()
    .execute();
  for (const charge of open) await cancelRecurringCharge(trx, charge.id, { solicitante: by.solicitante, codigo: 'CCLD' }, at);
  const cancelled = await reread(trx, row.id);
  await recurrenceCallback(trx, cancelled, at);
  return cancelled;
}

/** Ends the recurrence's solicitation under way, if one is. */
export async function closeSolicitations(trx: Trx, recurrenceId: bigint, status: 'CANCELADA' | 'EXPIRADA', at: Date): Promise<void> {
  await trx
    .updateTable('rec_solicitations')
    .set({ status, next_step_at: null, history: appended(status, at), updated_at: at })
    .where('recurrence_id', '=', recurrenceId)
    .where('status', 'in', ['CRIADA', 'ENVIADA', 'RECEBIDA'])
    .execute();
}


/**
 * A recurring charge cancelled (by its receiver, its payer, or with its recurrence): its attempts
 * under way are cancelled too, and the receiver is told.
 */
export async function cancelRecurringCharge(trx: Trx, chargeId: bigint, by: { solicitante: Solicitante; codigo: ChargeCancellation }, at: Date): Promise<void> {
  const encerramento = { cancelamento: { solicitante: by.solicitante, codigo: by.codigo, descricao: CHARGE_CANCELLATIONS[by.codigo] } };
  await trx
    .updateTable('recurring_charge_attempts')
    .set({ status: 'CANCELADA', step: null, next_step_at: null, history: appended('CANCELADA', at), updated_at: at })
    .where('charge_id', '=', chargeId)
    .where('status', 'in', ['SOLICITADA', 'AGENDADA'])
    .execute();
  await trx
    .updateTable('recurring_charges')
    .set({ status: 'CANCELADA', encerramento: JSON.stringify(encerramento), next_step_at: null, history: appended('CANCELADA', at), updated_at: at })
    .where('id', '=', chargeId)
    .execute();
  await notifyPayerCharge(trx, chargeId, 'recurring_charge_cancelled', at);
  await recurringChargeCallback(trx, chargeId, at);
}

