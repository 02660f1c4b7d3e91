// One PostgreSQL connection per use, for the scripts that read or set up the database beside the
// service (bench, chaos, soak). A multi-host URL (a replicated cluster, npm run cluster) is
// connected to as the service connects: to its read-write server.
import type pg from 'pg';
import { connectClient } from '../../src/db/multi-host.ts';

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  // A connection the server ends (a database dropped, a restart) fails the query, not the process.
  const client = await connectClient(url);
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The rows of one statement. */
export function query<T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  return withClient(url, async (client) => (await client.query<T>(text, params)).rows);
}
