import { sql, type Selectable } from 'kysely';
import type { DbExecutor } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';
import type { DB } from '../../db/schema.ts';

export type TransactionType = 'PAYMENT' | 'WITHDRAW' | 'REFUND_IN' | 'REFUND_OUT';
export type TransactionStatus = 'PENDING' | 'CONFIRMED' | 'ERROR';

export interface ListFilter {
  accountId: bigint;
  from: Date;
  /** Exclusive. */
  to: Date;
  status?: TransactionStatus | undefined;
  type?: TransactionType | undefined;
  externalId?: string | undefined;
  endToEndId?: string | undefined;
  pixKey?: string | undefined;
}

const COLUMNS = [
  'id',
  'type',
  'status',
  'amount_centavos',
  'fee_centavos',
  'external_id',
  'end_to_end_id',
  'counterpart_name',
  'counterpart_document',
  'counterpart_ispb',
  'counterpart_bank_name',
  'counterpart_bank_code',
  'counterpart_branch',
  'counterpart_account',
  'created_at',
  'updated_at',
  'processed_at',
  'error_reason',
  // What a sandbox settlement fault holds a pending transfer by (its key, its expiry).
  'pix_key',
  'expires_at',
] as const;

function filtered(db: DbExecutor, f: ListFilter) {
  let q = db
    .selectFrom('transactions')
    .where('account_id', '=', f.accountId)
    .where('created_at', '>=', f.from)
    .where('created_at', '<', f.to);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.type) q = q.where('type', '=', f.type);
  // In two halves, as findByIdentifier does, so that each finds its partial index
  // (transactions_account_external_idx or transactions_account_external_lookup_idx).
  if (f.externalId !== undefined) {
    const externalId = f.externalId;
    q = q.where((eb) =>
      eb.or([eb.and([eb('external_id', '=', externalId), eb('type', '=', 'WITHDRAW')]), eb.and([eb('external_id', '=', externalId), eb('type', '<>', 'WITHDRAW')])]),
    );
  }
  if (f.endToEndId !== undefined) q = q.where('end_to_end_id', '=', f.endToEndId);
  if (f.pixKey !== undefined) q = q.where('pix_key', '=', f.pixKey);
  return q;
}

/**
 * The name of a page's statement: its text varies with the filters given and with the cap, so
 * each combination (at most 64) is a statement of its own.
 */
function pageStatement(f: ListFilter, page: { cap?: number | undefined }): string {
  let variant = '';
  if (f.status) variant += 's';
  if (f.type) variant += 't';
  if (f.externalId !== undefined) variant += 'x';
  if (f.endToEndId !== undefined) variant += 'e';
  if (f.pixKey !== undefined) variant += 'k';
  if (page.cap) variant += 'c';
  return variant ? `transaction_page_${variant}` : 'transaction_page';
}

/** A page, newest first with ties broken by id, and the number of matching rows (up to `cap`). */
export async function listTransactions(db: DbExecutor, f: ListFilter, page: { offset: number; limit: number; cap?: number }) {
  const rows = filtered(db, f)
    .select(COLUMNS)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(page.offset)
    .limit(page.limit);
  const counted = page.cap
    ? db.selectFrom(filtered(db, f).select('id').limit(page.cap).as('capped')).select((eb) => eb.fn.countAll<bigint>().as('total'))
    : filtered(db, f).select((eb) => eb.fn.countAll<bigint>().as('total'));
  // The page and the count in one statement: one round trip to the database, not two.
  const result = await prepared(pageStatement(f, page), sql<TransactionRow & { total: bigint }>`
    with page as (${rows}), counted as (${counted})
    select page.*, counted.total from counted left join page on true
     order by page.created_at desc, page.id desc`).execute(db);
  const total = Number(result.rows[0]?.total ?? 0);
  return {
    rows: result.rows.filter((r) => r.id !== null).map(({ total: _total, ...row }): TransactionRow => row),
    total,
  };
}

export type TransactionRow = Pick<Selectable<DB['transactions']>, (typeof COLUMNS)[number]>;

/**
 * The caller's transaction whose end-to-end id, numeric id or external id is `identifier`
 * (optionally tied to a key), preferring them in that order when several match.
 */
export function findByIdentifier(db: DbExecutor, accountId: bigint, identifier: string, pixKey?: string) {
  const numericId = /^[1-9]\d{0,17}$/.test(identifier) ? BigInt(identifier) : null;
  let q = db
    .selectFrom('transactions')
    .select(COLUMNS)
    .where('account_id', '=', accountId)
    .where((eb) =>
      eb.or([
        eb('end_to_end_id', '=', identifier),
        // Two halves, so that each finds its index: transfers' externalIds are in the unique
        // index of transfers, the others' in the lookup index (see the baseline migration).
        eb.and([eb('external_id', '=', identifier), eb('type', '=', 'WITHDRAW')]),
        eb.and([eb('external_id', '=', identifier), eb('type', '<>', 'WITHDRAW')]),
        ...(numericId !== null ? [eb('id', '=', numericId)] : []),
      ]),
    );
  if (pixKey !== undefined) q = q.where('pix_key', '=', pixKey);
  return q
    .orderBy(sql`end_to_end_id is not distinct from ${identifier}`, 'desc')
    .orderBy(sql`id = ${numericId ?? 0n}`, 'desc')
    .orderBy('id', 'asc')
    .limit(1)
    .executeTakeFirst();
}

/** Changes when a transaction is created: the newest id (an index look-up). */
export const changeMarker = (db: DbExecutor) => db.selectFrom('transactions').select((eb) => eb.fn.max('id').as('marker'));
