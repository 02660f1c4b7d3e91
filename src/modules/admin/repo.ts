import { sql } from 'kysely';
import type { Db, DbExecutor } from '../../db/client.ts';

/** Arbitrary constant: the advisory lock that makes concurrent starts provision one demo account. */
const DEMO_LOCK = 72_620_002;

/**
 * Runs `work` on one connection holding the demo lock (PGlite has only one connection, so
 * everything inside must use the connection it is given).
 */
export function withDemoLock<T>(db: Db, work: (conn: Db) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${DEMO_LOCK})`.execute(conn);
    try {
      return await work(conn);
    } finally {
      await sql`select pg_advisory_unlock(${DEMO_LOCK})`.execute(conn);
    }
  });
}

/** This database's demo account id, once recorded. */
export async function findDemoAccountId(db: DbExecutor): Promise<bigint | undefined> {
  const row = await db.selectFrom('demo_account').select('account_id').executeTakeFirst();
  return row?.account_id;
}

export async function recordDemoAccount(db: DbExecutor, accountId: bigint): Promise<void> {
  await db.insertInto('demo_account').values({ account_id: accountId }).execute();
}
