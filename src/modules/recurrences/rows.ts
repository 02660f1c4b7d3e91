/**
 * Pix Automático's rows as the service reads them: a recurrence with its receiver and location,
 * a recurring charge with its recurrence's terms, its attempts and the Pix that paid it.
 */
import { sql, type Selectable } from 'kysely';
import type { DbExecutor } from '../../db/client.ts';
import type { RecurrencesTable, RecurringChargeAttemptsTable, RecurringChargesTable, RecSolicitationsTable } from '../../db/schema.ts';

/** A recurrence as the service reads it: its row, the receiver it charges for, and its location. */
export type RecurrenceRow = Selectable<RecurrencesTable> & {
  /** The receiver, as its recurrences show it. */
  recebedor_cnpj: string;
  recebedor_nome: string;
  /** The location the recurrence names, when it names one. */
  loc_token: string | null;
  loc_created_at: Date | null;
};

export function selectRecurrences(db: DbExecutor) {
  return db
    .selectFrom('recurrences')
    .innerJoin('accounts', 'accounts.id', 'recurrences.account_id')
    .leftJoin('rec_locations', 'rec_locations.id', 'recurrences.loc_id')
    .selectAll('recurrences')
    .select(['accounts.document as recebedor_cnpj', 'accounts.name as recebedor_nome', 'rec_locations.token as loc_token', 'rec_locations.created_at as loc_created_at']);
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
    .innerJoin('accounts', 'accounts.id', 'recurring_charges.account_id')
    .selectAll('recurring_charges')
    .select(['recurrences.id_rec', 'recurrences.politica_retentativa', 'accounts.document as recebedor_cnpj', 'accounts.name as recebedor_nome']);
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
export async function detailsOf(db: DbExecutor, rows: readonly RecurringChargeRow[]): Promise<RecurringChargeDetail[]> {
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
