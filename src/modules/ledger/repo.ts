import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';
import { prepared } from '../../db/prepared.ts';

export const LEDGER_CODES = { available: 'available', blocked: 'blocked' } as const;
/** Blocked money is spread over this many rows per account (docs/decisions/0011-sharded-blocked-money.md). */
export const BLOCKED_SHARDS = 8;
export const SYSTEM_ACCOUNTS = { pixNetwork: 'pix_network' } as const;

export interface Posting {
  readonly debitAccountId: bigint;
  readonly creditAccountId: bigint;
  readonly amountCentavos: bigint;
}

export async function createHolderLedgerAccounts(trx: Trx, accountId: bigint): Promise<void> {
  await trx
    .insertInto('ledger_accounts')
    .values([
      { account_id: accountId, code: LEDGER_CODES.available },
      ...Array.from({ length: BLOCKED_SHARDS }, (_, shard) => ({ account_id: accountId, code: LEDGER_CODES.blocked, shard })),
    ])
    .execute();
}

/** The account's available ledger account and its first blocked shard. */
export async function holderLedgerAccountIds(db: DbExecutor, accountId: bigint): Promise<{ available: bigint; blocked: bigint }> {
  const rows = await db.selectFrom('ledger_accounts').select(['id', 'code']).where('account_id', '=', accountId).where('shard', '=', 0).execute();
  const available = rows.find((r) => r.code === LEDGER_CODES.available)?.id;
  const blocked = rows.find((r) => r.code === LEDGER_CODES.blocked)?.id;
  if (available === undefined || blocked === undefined) throw new Error(`account ${accountId} has no ledger accounts`);
  return { available, blocked };
}

export async function systemLedgerAccountId(db: DbExecutor, code: string): Promise<bigint> {
  const row = await db.selectFrom('ledger_accounts').select('id').where('account_id', 'is', null).where('code', '=', code).executeTakeFirstOrThrow();
  return row.id;
}

export interface Balances {
  available: bigint;
  blocked: bigint;
}

/**
 * The balances of several accounts in one statement; an account with no ledger accounts is absent.
 * One text whatever the number of accounts, prepared once per connection: parsing and planning
 * the statement cost PostgreSQL more than running it, on the path of every balance read.
 * Why, and what was measured: docs/decisions/0018-balance-reads-coalesced.md.
 */
export async function holdersBalances(db: DbExecutor, accountIds: readonly bigint[]): Promise<Map<bigint, Balances>> {
  const { rows } = await prepared('holders_balances', sql<{ account_id: bigint; available: bigint | null; blocked: bigint | null }>`
    select account_id,
           sum(balance) filter (where code = 'available')::int8 as available,
           sum(balance) filter (where code = 'blocked')::int8 as blocked
      from ledger_accounts where account_id = any(${accountIds}::int8[]) group by account_id`).execute(db);
  return new Map(rows.map((r) => [r.account_id, { available: r.available ?? 0n, blocked: r.blocked ?? 0n }]));
}

export async function holderBalances(db: DbExecutor, accountId: bigint): Promise<Balances | undefined> {
  return (await holdersBalances(db, [accountId])).get(accountId);
}

/**
 * One posting through the database's ledger_post (db/functions/ledger_post.sql), the single
 * implementation that SQL functions and this code share: a guarded debit, the credit, the
 * posting row. Returns the ledger transaction id, or null when the debit account cannot pay
 * (nothing is written).
 */
export async function applyPosting(
  trx: Trx,
  kind: string,
  reference: string | null,
  ledgerTxId: bigint | null,
  posting: Posting,
  now: Date,
): Promise<bigint | null> {
  const result = await sql<{ id: bigint | null }>`
    select ledger_post(${kind}, ${reference}, ${ledgerTxId}::int8, ${posting.debitAccountId}::int8,
                       ${posting.creditAccountId}::int8, ${posting.amountCentavos}::int8, ${now}::timestamptz) as id`.execute(trx);
  return result.rows[0]?.id ?? null;
}

/** Changes with every posting, that is with every movement of money: the newest posting's id (an index look-up). */
export const changeMarker = (db: DbExecutor) => db.selectFrom('postings').select((eb) => eb.fn.max('id').as('marker'));
