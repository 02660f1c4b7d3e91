import { sql } from 'kysely';
import type { Db } from '../../db/client.ts';

/** True when the connection reaches a primary (it writes), false on a standby in recovery. */
export async function isPrimary(db: Db): Promise<boolean> {
  const result = await sql<{ recovery: boolean }>`select pg_is_in_recovery() as recovery`.execute(db);
  return result.rows[0]?.recovery === false;
}
