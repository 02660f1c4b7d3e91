// Writes src/db/schema.snapshot.json from a fresh embedded database: the schema that the
// migrations and the function files must produce on PGlite and PostgreSQL alike (checked by
// src/db/db.test.ts).
// Usage: npm run schema:snapshot  (DATABASE_URL=postgres://... to take it from PostgreSQL)
import { writeFileSync } from 'node:fs';
import { openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { schemaSnapshot } from '../src/db/schema-snapshot.ts';

const database = await openDatabase({ url: process.env.DATABASE_URL });
await migrate(database.db);
const snapshot = await schemaSnapshot(database.db);
await database.close();
writeFileSync(new URL('../src/db/schema.snapshot.json', import.meta.url), `${JSON.stringify(snapshot, null, 2)}\n`);
process.stdout.write(
  `schema snapshot: ${snapshot.columns.length} columns, ${snapshot.constraints.length} constraints, ${snapshot.indexes.length} indexes, ${snapshot.functions.length} functions\n`,
);
