// The OpenAPI document is generated from the routes' TypeBox schemas. `write` commits it to
// openapi.json; `check` (run in CI) fails when the committed file differs from the code.
import { readFileSync, writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/client.ts';
import { systemClock } from '../src/lib/clock.ts';

const target = new URL('../openapi.json', import.meta.url);
const mode = process.argv[2] ?? 'write';

export async function generateOpenApi(): Promise<string> {
  const database = await openDatabase({});
  const app = await buildApp({ config: loadConfig({ ADMIN_TOKEN: 'openapi-generation-token' }), db: database.db, clock: systemClock, logLevel: false });
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await database.close();
  return text;
}

const generated = await generateOpenApi();
if (mode === 'check') {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // missing file: reported below
  }
  if (committed !== generated) {
    process.stderr.write('openapi.json is out of date with the route schemas: run `npm run openapi` and commit it\n');
    process.exit(1);
  }
  process.stdout.write('openapi.json matches the code\n');
} else {
  writeFileSync(target, generated);
  process.stdout.write(`wrote openapi.json (${Object.keys(JSON.parse(generated).paths as object).length} paths)\n`);
}
