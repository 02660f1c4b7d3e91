/**
 * Pix Automático as the payer sees it, at the root paths and in its notifications: the
 * authorizations asked of it or held by it (a recurrence, with the solicitation that asked) and
 * the recurring charges it pays, with their attempts. Field names follow the root dialect
 * (English, amounts as decimal strings with their currency); BCB's codes stay BCB's (journeys,
 * catalog codes, `solicitante`).
 */
import { formatCentavos } from '../../lib/money.ts';
import type { Solicitante } from './catalog.ts';
import { payerMayCancel, settlementAt } from './cycle.ts';
import type { AttemptRow, AuthorizationRow, PayerChargeRow, RecurringChargeDetail, SolicitationRow } from './rows.ts';

/** Why a recurrence or a recurring charge ended, as its row keeps it. */
type Ending = { rejeicao?: { codigo: string; descricao: string }; cancelamento?: { solicitante: Solicitante; codigo: string; descricao: string } };

/** Why it ended, as the payer reads it: the refusal's code, or the cancellation with who asked. */
function endingOf(ending: Ending | null) {
  return {
    rejection: ending?.rejeicao ? { code: ending.rejeicao.codigo, description: ending.rejeicao.descricao } : null,
    cancellation: ending?.cancelamento
      ? { requestedBy: ending.cancelamento.solicitante, code: ending.cancelamento.codigo, description: ending.cancelamento.descricao }
      : null,
  };
}

const money = (centavos: bigint | null) => (centavos === null ? null : formatCentavos(centavos));

/** The payer's view of an authorization: the recurrence and the solicitation (journey 1) that asked for it. */
export function authorizationView(rec: AuthorizationRow, solicitation: SolicitationRow | null, receiverIspb: string) {
  const ending = rec.encerramento as Ending | null;
  return {
    idRec: rec.id_rec,
    status: rec.payer_status,
    journey: rec.jornada === 'AGUARDANDO_DEFINICAO' ? null : rec.jornada,
    receiver: { name: rec.recebedor_nome, document: rec.recebedor_cnpj, ispb: receiverIspb },
    contract: rec.contrato,
    object: rec.objeto,
    debtor: { name: rec.devedor_nome, document: rec.devedor_document },
    frequency: rec.periodicidade,
    startDate: rec.data_inicial,
    endDate: rec.data_final,
    amount: {
      fixed: money(rec.valor_rec_centavos),
      receiverMinimum: money(rec.valor_minimo_centavos),
      payerMaximum: money(rec.valor_maximo_pagador_centavos),
      currency: 'BRL' as const,
    },
    retryPolicy: rec.politica_retentativa,
    solicitation:
      solicitation === null ? null : { id: solicitation.id_solic_rec, status: solicitation.status, expiresAt: solicitation.expires_at.toISOString() },
    ...endingOf(ending),
    history: rec.history.map((h) => ({ status: h.status, at: h.data })),
    createdAt: rec.created_at.toISOString(),
    updatedAt: rec.updated_at.toISOString(),
  };
}

const OPEN_ATTEMPT = new Set(['SOLICITADA', 'AGENDADA']);

/** The attempt under way (asked or scheduled), if one is. */
export const openAttempt = (attempts: readonly AttemptRow[]): AttemptRow | undefined => attempts.find((a) => OPEN_ATTEMPT.has(a.status));

/** Why an attempt failed, for the payer: the catalog's code, or AM04 when the money was not there. */
export interface PayerFailure {
  code: string;
  description: string;
  /** The same attempt runs again then (the evening's retry of a morning without funds). */
  retryAt: string | null;
}

/** The payer's view of a recurring charge it pays: amount, dates, its attempts, and the Pix out that paid it. */
export function payerChargeView(detail: RecurringChargeDetail & { row: PayerChargeRow }, receiverIspb: string, now: Date) {
  const { row, attempts } = detail;
  const open = openAttempt(attempts);
  const paying = attempts.find((a) => a.status === 'PAGA');
  const ending = row.encerramento as Ending | null;
  return {
    id: Number(row.id),
    txid: row.txid,
    idRec: row.id_rec,
    status: row.payer_status,
    receiver: { name: row.recebedor_nome, document: row.recebedor_cnpj, ispb: receiverIspb },
    amount: formatCentavos(row.amount_centavos),
    currency: 'BRL' as const,
    dueDate: row.due_date,
    settlementDate: row.settlement_date,
    description: row.info_adicional,
    /** The payer may cancel the attempt under way until 23:59 of the day before it settles. */
    cancellableUntil: open !== undefined && payerMayCancel(now, open.data_liquidacao) ? cancelDeadline(open.data_liquidacao) : null,
    attempts: attempts.map((a) => ({
      position: a.position,
      type: a.tipo,
      date: a.data_liquidacao,
      status: a.status,
      endToEndId: a.end_to_end_id,
      rejection: a.rejeicao === null ? null : { code: a.rejeicao.codigo, description: a.rejeicao.descricao },
      history: a.history.map((h) => ({ status: h.status, at: h.data })),
    })),
    transactionId: paying?.debit_transaction_id === null || paying === undefined ? null : Number(paying.debit_transaction_id),
    endToEndId: paying?.end_to_end_id ?? null,
    ...endingOf(ending),
    history: row.history.map((h) => ({ status: h.status, at: h.data })),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** 23:59:59.999 of the day before `settlement`, in São Paulo: the last moment a payer cancels it. */
function cancelDeadline(settlement: string): string {
  return new Date(settlementAt(settlement).getTime() - 1).toISOString();
}

/** AUTHORIZATION: an authorization asked of the payer, approved, rejected, cancelled or expired. */
export const authorizationPayload = (view: ReturnType<typeof authorizationView>) => ({ type: 'AUTHORIZATION' as const, data: view });

/** RECURRING_CHARGE: a charge scheduled, paid, failed (with why) or cancelled. */
export const payerChargePayload = (view: ReturnType<typeof payerChargeView>, failure: PayerFailure | null) => ({
  type: 'RECURRING_CHARGE' as const,
  data: { ...view, ...(failure === null ? {} : { failure }) },
});
