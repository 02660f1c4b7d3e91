import type { DbExecutor } from '../db/client.ts';

/** Keeps the traceparent of the request that made a transaction (tracing on only). */
export async function saveTraceContext(db: DbExecutor, transactionId: bigint, traceparent: string, now: Date): Promise<void> {
  await db.insertInto('trace_contexts').values({ transaction_id: transactionId, traceparent, created_at: now }).onConflict((oc) => oc.doNothing()).execute();
}

/** The traceparents kept for these transactions. */
export async function traceContexts(db: DbExecutor, transactionIds: readonly bigint[]): Promise<Map<bigint, string>> {
  if (transactionIds.length === 0) return new Map();
  const rows = await db.selectFrom('trace_contexts').select(['transaction_id', 'traceparent']).where('transaction_id', 'in', [...transactionIds]).execute();
  return new Map(rows.map((r) => [r.transaction_id, r.traceparent]));
}

/** Forgets contexts older than `before`, at most `limit` of them; returns how many went. */
export async function deleteTraceContexts(db: DbExecutor, before: Date, limit: number): Promise<number> {
  const old = db.selectFrom('trace_contexts').select('transaction_id').where('created_at', '<', before).limit(limit);
  const result = await db.deleteFrom('trace_contexts').where('transaction_id', 'in', old).executeTakeFirst();
  return Number(result.numDeletedRows);
}
