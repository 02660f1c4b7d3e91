// The OpenAPI document is generated from the routes' TypeBox schemas, and the list of error
// codes from src/http/error-codes.ts. `write` commits them to openapi.json and docs/errors.md;
// `check` (run in CI) fails when a committed file differs from the code.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { errorCodesMarkdown } from '../src/http/error-codes.ts';
import { systemClock } from '../src/lib/clock.ts';
import { SandboxControls } from '../src/modules/controls/service.ts';

const target = new URL('../openapi.json', import.meta.url);
const errorsDoc = new URL('../docs/errors.md', import.meta.url);
const mode = process.argv[2] ?? 'write';

function committed(file: URL): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

export async function generateOpenApi(): Promise<string> {
  const database = await openDatabase({});
  // The app prepares its signing keys when built: it needs the schema, not any data.
  await migrate(database.db);
  // A throwaway key for the throwaway database: nothing is written under DATA_DIR.
  const config = loadConfig({ ADMIN_TOKEN: 'openapi-generation-token', KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64') });
  // The sandbox's controls register their routes too: the document is the sandbox's, the fullest.
  const controls = new SandboxControls(database.db, systemClock, { publicUrl: config.publicUrl });
  const app = await buildApp({ config, db: database.db, clock: controls.clock, realClock: systemClock, controls, logLevel: false });
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await database.close();
  return text;
}

const generated = await generateOpenApi();
const codes = errorCodesMarkdown();
if (mode === 'check') {
  let stale = false;
  if (committed(target) !== generated) {
    process.stderr.write('openapi.json is out of date with the route schemas: run `npm run openapi` and commit it\n');
    stale = true;
  }
  if (committed(errorsDoc) !== codes) {
    process.stderr.write('docs/errors.md is out of date with src/http/error-codes.ts: run `npm run openapi` and commit it\n');
    stale = true;
  }
  if (stale) process.exit(1);
  process.stdout.write('openapi.json and docs/errors.md match the code\n');
} else {
  writeFileSync(target, generated);
  writeFileSync(errorsDoc, codes);
  process.stdout.write(`wrote openapi.json (${Object.keys(JSON.parse(generated).paths as object).length} paths) and docs/errors.md\n`);
}
