import { sql } from 'kysely';
import type { DbExecutor, Trx } from '../../db/client.ts';

export const LEDGER_CODES = { available: 'available', blocked: 'blocked' } as const;
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
      { account_id: accountId, code: LEDGER_CODES.blocked },
    ])
    .execute();
}

export async function holderLedgerAccountIds(db: DbExecutor, accountId: bigint): Promise<{ available: bigint; blocked: bigint }> {
  const rows = await db.selectFrom('ledger_accounts').select(['id', 'code']).where('account_id', '=', accountId).execute();
  const available = rows.find((r) => r.code === LEDGER_CODES.available)?.id;
  const blocked = rows.find((r) => r.code === LEDGER_CODES.blocked)?.id;
  if (available === undefined || blocked === undefined) throw new Error(`account ${accountId} has no ledger accounts`);
  return { available, blocked };
}

export async function systemLedgerAccountId(db: DbExecutor, code: string): Promise<bigint> {
  const row = await db.selectFrom('ledger_accounts').select('id').where('account_id', 'is', null).where('code', '=', code).executeTakeFirstOrThrow();
  return row.id;
}

export async function holderBalances(db: DbExecutor, accountId: bigint): Promise<{ available: bigint; blocked: bigint } | undefined> {
  const rows = await db.selectFrom('ledger_accounts').select(['code', 'balance']).where('account_id', '=', accountId).execute();
  if (rows.length === 0) return undefined;
  return {
    available: rows.find((r) => r.code === LEDGER_CODES.available)?.balance ?? 0n,
    blocked: rows.find((r) => r.code === LEDGER_CODES.blocked)?.balance ?? 0n,
  };
}

/**
 * Locks, in ascending id order, the ledger accounts of these holders and these system codes.
 * A transaction that posts to several accounts (a settlement batch) takes its locks here first,
 * so two of them never wait on each other in a cycle (a deadlock PostgreSQL would abort).
 */
export async function lockLedgerAccounts(trx: Trx, holderAccountIds: readonly bigint[], systemCodes: readonly string[]): Promise<void> {
  if (holderAccountIds.length === 0 && systemCodes.length === 0) return;
  await trx
    .selectFrom('ledger_accounts')
    .select('id')
    .where((eb) =>
      eb.or([
        ...(holderAccountIds.length > 0 ? [eb('account_id', 'in', [...holderAccountIds])] : []),
        ...(systemCodes.length > 0 ? [eb.and([eb('account_id', 'is', null), eb('code', 'in', [...systemCodes])])] : []),
      ]),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
}

/**
 * Applies postings inside the caller's transaction. The debit is a guarded update: the
 * no-overdraft CHECK on ledger_accounts rejects a balance that would go negative, so two
 * concurrent debits can never both spend the same money.
 */
export async function insertLedgerTransaction(trx: Trx, kind: string, reference: string | null): Promise<bigint> {
  const row = await trx.insertInto('ledger_transactions').values({ kind, reference }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function applyPosting(trx: Trx, ledgerTxId: bigint, posting: Posting): Promise<void> {
  await trx
    .updateTable('ledger_accounts')
    .set({ balance: sql<bigint>`balance - ${posting.amountCentavos}` })
    .where('id', '=', posting.debitAccountId)
    .execute();
  await trx
    .updateTable('ledger_accounts')
    .set({ balance: sql<bigint>`balance + ${posting.amountCentavos}` })
    .where('id', '=', posting.creditAccountId)
    .execute();
  await trx
    .insertInto('postings')
    .values({
      ledger_tx_id: ledgerTxId,
      debit_account_id: posting.debitAccountId,
      credit_account_id: posting.creditAccountId,
      amount_centavos: posting.amountCentavos,
    })
    .execute();
}
