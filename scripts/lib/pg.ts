// One PostgreSQL connection per use, for the scripts that read or set up the database beside the
// service (bench, chaos, soak).
import pg from 'pg';

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  // A connection the server ends (a database dropped, a restart) fails the query, not the process.
  client.on('error', () => undefined);
  await client.connect();
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
