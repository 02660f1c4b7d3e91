import type { DbExecutor } from '../../db/client.ts';
import type { PixKeyType } from '../../lib/pix-key.ts';

/** A key in the directory (DICT): one of our accounts' (accountId set) or another institution's. */
export interface DirectoryEntry {
  key: string;
  type: PixKeyType;
  accountId: bigint | null;
  name: string;
  document: string;
  ispb: string;
  bankName: string | null;
  branch: string | null;
  accountNumber: string | null;
  /** Sandbox only: how the receiving institution answers transfers to this key. */
  behavior: 'reject' | 'timeout' | null;
}

/** Registers a key; false when the key is already in the directory (a key has one holder). */
export async function insertKey(db: DbExecutor, entry: DirectoryEntry): Promise<boolean> {
  const result = await db
    .insertInto('dict_keys')
    .values({
      key: entry.key,
      key_type: entry.type,
      account_id: entry.accountId,
      owner_name: entry.name,
      owner_document: entry.document,
      ispb: entry.ispb,
      bank_name: entry.bankName,
      branch: entry.branch,
      account_number: entry.accountNumber,
      behavior: entry.behavior,
    })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return (result.numInsertedOrUpdatedRows ?? 0n) > 0n;
}

export function findKey(db: DbExecutor, key: string) {
  return db.selectFrom('dict_keys').select(['key', 'account_id']).where('key', '=', key).executeTakeFirst();
}

/** An account's keys, oldest first (an account holds at most 20). */
export function listAccountKeys(db: DbExecutor, accountId: bigint) {
  return db
    .selectFrom('dict_keys')
    .select(['key', 'key_type'])
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('key')
    .limit(20)
    .execute();
}

/** What a payer is shown of a key before paying it. */
export function findEntry(db: DbExecutor, key: string) {
  return db
    .selectFrom('dict_keys')
    .select(['key', 'key_type', 'owner_name', 'owner_document', 'ispb', 'bank_name'])
    .where('key', '=', key)
    .executeTakeFirst();
}
