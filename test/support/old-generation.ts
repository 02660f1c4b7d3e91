/**
 * Run as its own process by src/db/db.test.ts: opens the database at argv[2] (already migrated)
 * and prints, as JSON, how much the old generation grew over 1,000 queries from four clients at
 * once, after a warm-up. A process of its own, so that nothing the test file did before (its
 * migrations' long-lived results) has already taught V8 to allocate node-postgres's rows in the
 * old generation (allocation-site pretenuring), which is not what this measures.
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/client.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
const oldSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
const database = await openDatabase({ url: process.argv[2]!, poolSize: 4 });
// Four clients at once, as a service's requests are: each query's rows are read and dropped.
const queries = (each: number) =>
  Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = 0; i < each; i++) await sql`select g, repeat('x', 100) as t from generate_series(1, 20) g`.execute(database.db);
    }),
  );
await queries(50);
gc({ type: 'major' });
const before = oldSpace();
await queries(250);
gc({ type: 'minor' });
gc({ type: 'minor' });
process.stdout.write(`${JSON.stringify({ grown: oldSpace() - before })}\n`);
await database.close();
