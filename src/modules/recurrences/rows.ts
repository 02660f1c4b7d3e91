/**
 * Pix Automático's rows as the service reads them: a recurrence with its receiver and location,
 * a recurring charge with its recurrence's terms, its attempts and the Pix that paid it.
 */
import { sql, type Selectable } from 'kysely';
import type { DbExecutor } from '../../db/client.ts';
import type { RecurrencesTable, RecurringChargeAttemptsTable, RecurringChargesTable, RecSolicitationsTable } from '../../db/schema.ts';

/** A recurrence as the service reads it: its row, the receiver it charges for, and its location. */
export type RecurrenceRow = Selectable<RecurrencesTable> & {
  /** The receiver, as its recurrences show it: an account of this service, or another institution's (recebedor_externo). */
  recebedor_cnpj: string;
  recebedor_nome: string;
  /** The location the recurrence names, when it names one. */
  loc_token: string | null;
  loc_created_at: Date | null;
};

/** The receiver's CNPJ and name: its account's, or those another institution gave. */
const receiverColumns = (table: 'recurrences') =>
  [
    sql<string>`coalesce(accounts.document, ${sql.ref(`${table}.recebedor_externo`)}->>'cnpj')`.as('recebedor_cnpj'),
    sql<string>`coalesce(accounts.name, ${sql.ref(`${table}.recebedor_externo`)}->>'nome')`.as('recebedor_nome'),
  ] as const;

export function selectRecurrences(db: DbExecutor) {
  return db
    .selectFrom('recurrences')
    .leftJoin('accounts', 'accounts.id', 'recurrences.account_id')
    .leftJoin('rec_locations', 'rec_locations.id', 'recurrences.loc_id')
    .selectAll('recurrences')
    .select([...receiverColumns('recurrences'), 'rec_locations.token as loc_token', 'rec_locations.created_at as loc_created_at']);
}

export type SolicitationRow = Selectable<RecSolicitationsTable>;
export type AttemptRow = Selectable<RecurringChargeAttemptsTable>;

/** A recurring charge with what its views need of its recurrence and receiver. */
export type RecurringChargeRow = Selectable<RecurringChargesTable> & {
  id_rec: string;
  politica_retentativa: RecurrencesTable['politica_retentativa'];
  recebedor_cnpj: string;
  recebedor_nome: string;
};

export function selectRecurringCharges(db: DbExecutor) {
  return db
    .selectFrom('recurring_charges')
    .innerJoin('recurrences', 'recurrences.id', 'recurring_charges.recurrence_id')
    .leftJoin('accounts', 'accounts.id', 'recurring_charges.account_id')
    .selectAll('recurring_charges')
    .select(['recurrences.id_rec', 'recurrences.politica_retentativa', ...receiverColumns('recurrences')]);
}

/** The Pix that paid a recurring charge, as BCB's PixAutomatico shows it. */
export interface PaidPix {
  end_to_end_id: string | null;
  txid: string | null;
  amount_centavos: bigint;
  description: string | null;
  created_at: Date;
}

/** A recurring charge as its views show it: the row, its attempts (first first), and the Pix that paid it. */
export interface RecurringChargeDetail {
  row: RecurringChargeRow;
  attempts: AttemptRow[];
  paid: PaidPix | null;
}

/** The attempts and payments of recurring charges, read for all of them at once. */
export async function detailsOf<R extends RecurringChargeRow>(db: DbExecutor, rows: readonly R[]): Promise<(RecurringChargeDetail & { row: R })[]> {
  if (rows.length === 0) return [];
  const attempts = await db
    .selectFrom('recurring_charge_attempts')
    .selectAll()
    .where(
      'charge_id',
      'in',
      rows.map((r) => r.id),
    )
    .orderBy('charge_id')
    .orderBy('position')
    .execute();
  const paidIds = rows.flatMap((r) => (r.paid_transaction_id === null ? [] : [r.paid_transaction_id]));
  const paid =
    paidIds.length === 0
      ? []
      : await db.selectFrom('transactions').select(['id', 'end_to_end_id', 'txid', 'amount_centavos', 'description', 'created_at']).where('id', 'in', paidIds).execute();
  return rows.map((row) => ({
    row,
    attempts: attempts.filter((a) => a.charge_id === row.id),
    paid: paid.find((p) => p.id === row.paid_transaction_id) ?? null,
  }));
}

/** One recurring charge's detail, read in the caller's connection (a transaction's, to see its own writes). */
export async function chargeDetail(db: DbExecutor, chargeId: bigint): Promise<RecurringChargeDetail> {
  const row = await selectRecurringCharges(db).where('recurring_charges.id', '=', chargeId).executeTakeFirstOrThrow();
  return (await detailsOf(db, [row]))[0]!;
}

/**
 * What tells the console that Pix Automático moved, whichever process moved it: a sum of a hash
 * of each row's status and the length of its history (a step may stamp a row with an earlier
 * moment than the last one's, so no time column tells it). Small tables in a sandbox.
 */
const moved = (table: 'recurrences' | 'rec_solicitations' | 'recurring_charges' | 'recurring_charge_attempts') => (db: DbExecutor) =>
  db.selectFrom(table).select(sql<string>`sum(hashtext(id || ' ' || status || ' ' || jsonb_array_length(history)))`.as('marker'));

export const automaticoMarkers = [moved('recurrences'), moved('rec_solicitations'), moved('recurring_charges'), moved('recurring_charge_attempts')];

/** Where an authorization stands for its payer here. */
export type AuthorizationStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'CANCELLED' | 'EXPIRED' | 'WITHDRAWN';

/** Where a recurring charge stands for its payer here. */
export type PayerChargeStatus = 'RECEIVED' | 'SCHEDULED' | 'FAILED' | 'PAID' | 'REJECTED' | 'CANCELLED' | 'EXPIRED';

/**
 * The payer's status of a recurrence, in one place for its views and its list's filter: BCB's
 * ended statuses, PENDING while the solicitation that reached the payer waits for its answer,
 * WITHDRAWN when the receiver cancelled that solicitation before it was answered.
 */
export const authorizationStatusOf = sql<AuthorizationStatus>`case recurrences.status
    when 'APROVADA' then 'APPROVED' when 'REJEITADA' then 'REJECTED' when 'CANCELADA' then 'CANCELLED' when 'EXPIRADA' then 'EXPIRED'
    else case when exists (select 1 from rec_solicitations s where s.recurrence_id = recurrences.id and s.payer_account_id = recurrences.payer_account_id
                                                                and s.status = 'RECEBIDA') then 'PENDING' else 'WITHDRAWN' end end`;

export type AuthorizationRow = RecurrenceRow & { payer_status: AuthorizationStatus };

/** The recurrences asked of, or held by, a payer of this service, with the payer's status. */
export function selectAuthorizations(db: DbExecutor) {
  return selectRecurrences(db).select(authorizationStatusOf.as('payer_status')).where('recurrences.payer_account_id', 'is not', null);
}

/**
 * The payer's status of a recurring charge, in one place for its views and its list's filter:
 * BCB's ended statuses, then by its attempt under way (SCHEDULED, or RECEIVED while the payer's
 * PSP has still to answer it), FAILED while none is (an attempt failed and the receiver may retry).
 */
export const payerChargeStatusOf = sql<PayerChargeStatus>`case recurring_charges.status
    when 'CONCLUIDA' then 'PAID' when 'REJEITADA' then 'REJECTED' when 'CANCELADA' then 'CANCELLED' when 'EXPIRADA' then 'EXPIRED'
    else case when exists (select 1 from recurring_charge_attempts a where a.charge_id = recurring_charges.id and a.status = 'AGENDADA') then 'SCHEDULED'
              when exists (select 1 from recurring_charge_attempts a where a.charge_id = recurring_charges.id and a.status = 'SOLICITADA') then 'RECEIVED'
              else 'FAILED' end end`;

export type PayerChargeRow = RecurringChargeRow & { payer_status: PayerChargeStatus; payer_account_id: bigint };

/** The recurring charges a payer of this service pays, with the payer's status. */
export function selectPayerCharges(db: DbExecutor) {
  return selectRecurringCharges(db)
    .select([payerChargeStatusOf.as('payer_status'), sql<bigint>`recurrences.payer_account_id`.as('payer_account_id')])
    .where('recurrences.payer_account_id', 'is not', null);
}
