import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, matchesGlob, normalize } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { OPERATOR_USAGE } from '../src/cli.ts';
import { checkCommand, packageJson, readRepo, ROOT, simpleCommands, usageCommands, type CommandContext } from './readme/commands.ts';
import { anchors, codeSpans, links, shellBlocks, tableUnder, type Segment, type ShellBlock } from './readme/markdown.ts';
import { ShellSession } from './readme/shell.ts';
import { difference } from './readme/shapes.ts';

/**
 * README.md and docs/guide/*.md are run as written: every shell block, in order, against a
 * service started as `npm start` starts it, every output shown compared with the real one; the
 * blocks that cannot run here, the configuration and operator tables and every relative link are
 * checked against the code. A failure names the file, line and command that drifted.
 */

const README = 'README.md';
const GUIDES = readdirSync(join(ROOT, 'docs/guide'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/guide/${name}`);
const DOC_FILES = [README, ...GUIDES];
const readme = readRepo(README);

interface Service {
  readonly child: ChildProcess;
  /** What the first start printed. */
  readonly banner: string;
  readonly port: number;
  readonly adminToken: string;
  readonly exited: Promise<number | null>;
}

/** `npm start`'s own command (`node src/main.ts serve`), run from `dir` as a reader's terminal would. */
async function startService(dir: string, env: Record<string, string>): Promise<Service> {
  const [program, script, ...args] = packageJson.scripts.start!.split(' ');
  assert.equal(program, 'node', `npm start runs "${packageJson.scripts.start}", which this test does not know how to start`);
  const child = spawn(process.execPath, [join(ROOT, script!), ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const banner = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start printed no banner within 60 s:\n${output}`)), 60_000);
    const check = () => {
      // The banner ends with the `curl` line of /balance (with the token and the certificate).
      if (/\/balance -H .*\n/.test(output)) {
        clearTimeout(timer);
        resolve(output);
      } else if (child.exitCode !== null) {
        clearTimeout(timer);
        reject(new Error(`npm start exited ${child.exitCode}:\n${output}`));
      } else setTimeout(check, 50);
    };
    check();
  });
  const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(banner);
  const adminToken = /ADMIN_TOKEN .*\): (\S+)/.exec(banner);
  assert.ok(port && adminToken, `the banner gives no address or ADMIN_TOKEN:\n${banner}`);
  return { child, banner, port: Number(port[1]), adminToken: adminToken[1]!, exited };
}

/** The command that printed a segment's output (its last line that is not a comment or a continuation), and its line. */
function lastCommand(segment: Segment): { text: string; line: number } {
  const lines = segment.command.split('\n');
  let at = 0;
  lines.forEach((l, i) => {
    if (l.trim() !== '' && !l.trimStart().startsWith('#') && !(lines[i - 1] ?? '').endsWith('\\')) at = i;
  });
  const text = lines[at] ?? '';
  return { text: text.length > 110 ? `${text.slice(0, 107)}...` : text, line: segment.line + at };
}

/** An error body the docs show: the seed's (`statusCode`) or a BCB problem (`status`). */
const isErrorBody = (value: unknown) => {
  const body = value as { statusCode?: unknown; status?: unknown } | null;
  return typeof body === 'object' && body !== null && Number(body.statusCode ?? body.status) >= 400;
};

async function runSegment(session: ShellSession, block: ShellBlock, segment: Segment): Promise<void> {
  const command = lastCommand(segment);
  const where = `${block.file}:${command.line} (${block.section}): \`${command.text}\``;
  const result = await session.run(segment.command);
  // README_TEST_SHOW=1 prints what each command printed, to update the outputs the docs show.
  if (process.env.README_TEST_SHOW) process.stderr.write(`${where}\n${result.stdout}\n`);
  // curl's --fail-with-body exits 22 on an HTTP error, which is what a block showing an error body expects.
  const failedAsShown = result.status === 22 && isErrorBody(segment.expected);
  if (result.status !== 0 && !failedAsShown) {
    assert.fail(`${where} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
  if (segment.expected === undefined) return;
  let actual: unknown;
  try {
    actual = JSON.parse(result.stdout);
  } catch {
    assert.fail(`${where} printed no JSON, where the docs show some:\n${result.stdout}\n${result.stderr}`);
  }
  const found = difference(segment.expected, actual);
  if (found) assert.fail(`${where} printed what the docs do not show, at ${found}\nprinted: ${result.stdout.trim().slice(0, 1500)}`);
}

describe('the README and the guides, run as written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pix-readme-'));
  let service: Service;
  let session: ShellSession;

  before(async () => {
    // The README's quick start is `npm start` on the embedded database, whose demo files are the
    // `data/demo/` it names: the test starts the same, on both databases' runs of the suite.
    service = await startService(dir, {});
    session = new ShellSession(dir, service.port, { ADMIN_TOKEN: service.adminToken, HOME: dir });
  });
  after(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the first start prints what the quick start says, and writes every data/current file it names', () => {
    // "prints its credentials, the ADMIN_TOKEN of this run and a ready curl line"
    for (const printed of [/clientId: +pix_\w+/, /clientSecret: +\S{20,}/, /ADMIN_TOKEN .*: \S{16,}/, /curl -s -X POST http:\/\/127\.0\.0\.1:\d+\/api\/auth\/token/]) {
      assert.match(service.banner, printed);
    }
    assert.match(service.banner, /Console: http:\/\/127\.0\.0\.1:\d+\/console/);
    assert.match(
      readme,
      /prints\s+its credentials, the `ADMIN_TOKEN` \(made once, kept in `data\/admin-token`\), the console's address and a ready `curl` line/,
      'the quick start no longer says what the first start prints: update this test with it',
    );
    assert.equal(readFileSync(join(dir, 'data/admin-token'), 'utf8').trim(), service.adminToken);
    const named = new Set([...readme.matchAll(/data\/current\/([\w.-]+)/g)].map((m) => m[1]!));
    for (const name of codeSpans(readme)) if (/^[\w-]+\.(crt|key|urlencoded|json)$/.test(name) && name !== 'openapi.json') named.add(name);
    for (const name of named) assert.ok(existsSync(join(dir, 'data/current', name)), `README.md names data/current/${name}, which the first start does not write`);
  });

  for (const file of DOC_FILES) {
    it(`${file}: every shell block runs and prints what it shows`, async () => {
      const blocks = shellBlocks(file, readRepo(file));
      // A guide starts from the shell of the README's quick start ($TOKEN, $CERT, $ADMIN_TOKEN).
      if (file !== README) session.restore('quick-start');
      for (const block of blocks) {
        if (block.notRun !== null) continue;
        for (const segment of block.segments) await runSegment(session, block, segment);
        if (file === README && block.section === 'Quick start') session.save('quick-start');
      }
    });
  }

  it('stops on SIGTERM with exit code 0 (Operations)', async () => {
    service.child.kill('SIGTERM');
    assert.equal(await service.exited, 0);
  });
});

describe('the quick start on PostgreSQL', { skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'pix-readme-pg-'));
  const server = process.env.TEST_DATABASE_URL ?? '';
  const name = `pix_readme_${process.pid}_${Date.now()}`;
  const database = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server });
    await client.connect();
    await client.query(sql);
    await client.end();
  };
  let service: Service | undefined;
  after(async () => {
    if (service && service.child.exitCode === null) {
      service.child.kill('SIGTERM');
      await service.exited;
    }
    await admin(`drop database if exists ${name} with (force)`);
    rmSync(dir, { recursive: true, force: true });
  });

  it("the second terminal's commands of the quick start work as written, on the PostgreSQL demo account's files", async () => {
    await admin(`create database ${name}`);
    service = await startService(dir, { DATABASE_URL: database });
    assert.match(readlinkSync(join(dir, 'data/current')), /^demo-pix_readme_/, 'data/current names the PostgreSQL database\'s demo files');
    const session = new ShellSession(dir, service.port, { HOME: dir });
    const blocks = shellBlocks(README, readme).filter((block) => block.section === 'Quick start' && block.notRun === null);
    assert.ok(blocks.length > 0);
    for (const block of blocks) for (const segment of block.segments) await runSegment(session, block, segment);
  });
});

/** Everything under docs/, recursively. */
function docsFiles(dir = 'docs'): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(join(ROOT, path)).isDirectory() ? docsFiles(path) : [path];
  });
}

const PRODUCTION = {
  PIX_MODE: 'production',
  DATABASE_URL: 'postgres://127.0.0.1:5432/readme',
  ADMIN_TOKEN: 'readme-test-admin-token-01',
  KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
  PUBLIC_URL: 'https://pix.example.com',
};
const SANDBOX = { ADMIN_TOKEN: 'readme-test-admin-token-01' };
const omit = (env: Record<string, string>, name: string) => Object.fromEntries(Object.entries(env).filter(([k]) => k !== name));

const configTable = () => {
  const table = new Map<string, { fallback: string; meaning: string }>();
  for (const [variables, fallback, meaning] of tableUnder(readme, 'Configuration')) {
    for (const name of codeSpans(variables!)) table.set(name, { fallback: fallback!, meaning: meaning ?? '' });
  }
  return table;
};

/** The variables loadConfig reads, sandbox and production alike. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const recording = (env: Record<string, string>) =>
    new Proxy(env, {
      get: (target, key) => {
        if (typeof key === 'string') read.add(key);
        return target[key as string];
      },
    });
  loadConfig(recording({}));
  loadConfig(recording({ ...PRODUCTION }));
  return read;
}

/** The default a row of the configuration table gives, checked against loadConfig. */
function checkDefault(name: string, fallback: string, meaning: string): void {
  // A variable that needs another one in sandbox mode ("needs `ADMIN_PORT` in sandbox mode") has
  // its default checked in production mode, where it stands alone.
  const base = name === 'ADMIN_TOKEN' ? {} : /needs `\w+` in sandbox mode/.test(meaning) ? PRODUCTION : SANDBOX;
  const value = codeSpans(fallback)[0];
  if (/^unset/.test(fallback)) {
    assert.deepEqual(loadConfig({ ...base, [name]: '' }), loadConfig(base), `${name}: empty is not the same as unset`);
  } else if (/^random/.test(fallback)) {
    assert.notDeepEqual(loadConfig(base), loadConfig(base), `${name}: the table says random, but two starts get the same`);
  } else {
    assert.ok(value, `${name}: the default "${fallback}" names no value in backticks`);
    assert.deepEqual(loadConfig({ ...base, [name]: value }), loadConfig(base), `${name}: the table says the default is ${value}, loadConfig disagrees`);
  }
  const production = /\(`([^`]+)` in production mode\)/.exec(fallback);
  if (production) {
    assert.deepEqual(loadConfig({ ...PRODUCTION, [name]: production[1]! }), loadConfig(PRODUCTION), `${name}: not ${production[1]} in production mode`);
  }
  if (/required in production/.test(fallback)) {
    assert.throws(() => loadConfig(omit(PRODUCTION, name)), (error: Error) => error.message.startsWith(name), `${name} is said to be required in production`);
  }
}

let cliCache: CommandContext['cli'] | undefined;
/** The commands `pix-api help` prints (serve, worker, migrate and the operator commands). */
const cliCommands = () =>
  (cliCache ??= usageCommands(execFileSync(process.execPath, [join(ROOT, 'src/main.ts'), 'help'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } })));

interface Operation {
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Schema {
  $ref?: string;
  properties?: Record<string, unknown>;
  required?: string[];
}

describe('the claims of README.md and docs/, against the code', () => {
  const openapi = JSON.parse(readRepo('openapi.json')) as { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, Schema> } };
  const resolve = (schema: Schema): Schema => (schema.$ref ? openapi.components!.schemas![schema.$ref.split('/').pop()!]! : schema);
  const route = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`;
  const routes = new Map(Object.entries(openapi.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => [route(method, path), op] as const)));

  it('every command of a block that is not run names scripts, CLI commands, files and variables that exist', () => {
    const context: CommandContext = { configVariables: new Set(configTable().keys()), cli: cliCommands() };
    const problems: string[] = [];
    for (const file of [README, ...docsFiles().filter((f) => f.endsWith('.md'))]) {
      for (const block of shellBlocks(file, readRepo(file))) {
        if (block.notRun === null) {
          // Only README.md and the guides are run: a block elsewhere must say it is not.
          if (!DOC_FILES.includes(file)) problems.push(`${file}:${block.line}: a shell block outside README.md and docs/guide is not run: mark it, or move it to a guide`);
          continue;
        }
        for (const segment of block.segments) {
          for (const command of simpleCommands(segment.command)) {
            problems.push(...checkCommand(command, context).map((p) => `${file}:${segment.line}: \`${command}\`: ${p}`));
          }
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('the configuration table lists what src/config.ts reads, with the defaults it gives', () => {
    const table = configTable();
    const read = variablesRead();
    for (const name of read) assert.ok(table.has(name), `src/config.ts reads ${name}, which the README's configuration table does not list`);
    const src = execFileSync('grep', ['-rh', '--include=*.ts', 'process.env.', join(ROOT, 'src')], { encoding: 'utf8' });
    for (const [name, { fallback, meaning }] of table) {
      if (read.has(name)) {
        checkDefault(name, fallback, meaning);
        continue;
      }
      // Read outside loadConfig (LOG_LEVEL): then with the table's default, where it is read.
      const value = codeSpans(fallback)[0];
      assert.ok(src.includes(`process.env.${name} ?? '${value}'`), `the configuration table lists ${name}, which src/ does not read with the default ${value}`);
    }
    const example = codeSpans(readme).find((span) => span.startsWith('Invalid configuration: '));
    const [, name, problem] = /^Invalid configuration: (\w+) (.*\(got "(.*)"\))$/.exec(example ?? '') ?? [];
    assert.ok(name && problem, 'the README shows no "Invalid configuration: ..." line');
    const raw = /\(got "(.*)"\)$/.exec(problem)![1]!;
    assert.throws(() => loadConfig({ ...SANDBOX, [name]: raw }), { message: `${name} ${problem}` });
  });

  it('the operator table names the /admin routes with their bodies and answers, and the CLI commands', () => {
    const context: CommandContext = { configVariables: new Set(), cli: cliCommands() };
    const named = new Set<string>();
    const cliNamed = new Set<string>();
    const keys = (list: string) => list.split(',').map((k) => k.trim()).sort();
    for (const [call, cli, answer] of tableUnder(readme, 'Operator API and CLI')) {
      const [, method, path, body] = /^`(\w+) (\S+)(?: \{(.*)\})?`$/.exec(call!) ?? [];
      assert.ok(method && path, `operator table: cannot read the call ${call}`);
      const op = routes.get(route(method, path));
      assert.ok(op, `operator table: ${method} ${path} is not a route (openapi.json)`);
      named.add(route(method, path));
      const schema = op.requestBody ? resolve(op.requestBody.content['application/json']!.schema) : undefined;
      const fields = body ? keys(body) : [];
      assert.deepEqual(fields.map((f) => f.replace('?', '')), Object.keys(schema?.properties ?? {}).sort(), `${method} ${path}: the body's fields`);
      assert.deepEqual(fields.filter((f) => !f.endsWith('?')), [...(schema?.required ?? [])].sort(), `${method} ${path}: the body's required fields`);
      const [, status, answerFields] = /^(\d{3})(?: `\{(.*)\}`)?$/.exec(answer!) ?? [];
      assert.ok(status && op.responses[status], `${method} ${path}: answers ${answer}, not a documented status`);
      const response = op.responses[status]!.content?.['application/json']?.schema;
      assert.deepEqual(answerFields ? keys(answerFields) : [], Object.keys(response ? resolve(response).properties ?? {} : {}).sort(), `${method} ${path}: the answer's fields`);
      // A call may have more than one command (PATCH /admin/accounts: scopes limit, address set).
      for (const command of codeSpans(cli!)) {
        assert.deepEqual(checkCommand(command, context), [], `operator table: ${command}`);
        cliNamed.add(command.split(' ').slice(2, 4).join(' '));
      }
    }
    const adminRoutes = [...routes.keys()].filter((r) => r.split(' ')[1]!.startsWith('/admin/'));
    assert.deepEqual(adminRoutes.filter((r) => !named.has(r)), [], 'operator routes missing from the README table');
    const operatorCommands = [...usageCommands(OPERATOR_USAGE).keys()];
    assert.deepEqual(operatorCommands.filter((c) => !cliNamed.has(c)), [], 'CLI commands missing from the README table');
  });

  it('every relative link of README.md and docs/, and every docs/ path in a code comment, points at a file (and heading) that exists', () => {
    const problems: string[] = [];
    for (const file of [README, ...docsFiles().filter((f) => f.endsWith('.md'))]) {
      for (const link of links(readRepo(file))) {
        if (/^[a-z][a-z+.-]*:/i.test(link.target)) continue;
        const [path, anchor] = link.target.split('#');
        const target = path ? normalize(join(dirname(file), path)) : file;
        if (!existsSync(join(ROOT, target))) problems.push(`${file}:${link.line}: ${link.target}: no ${target}`);
        else if (anchor && target.endsWith('.md') && !anchors(readRepo(target)).has(anchor)) {
          problems.push(`${file}:${link.line}: ${link.target}: ${target} has no heading #${anchor}`);
        }
      }
    }
    // A code comment that needs more than a sentence links to its decision record.
    const code = execFileSync('grep', ['-rnoE', '--include=*.ts', 'docs/[A-Za-z0-9/_.-]+\\.md', 'src', 'scripts', 'test'], { cwd: ROOT, encoding: 'utf8' });
    for (const hit of code.trim().split('\n').filter(Boolean)) {
      const [file, line, path] = hit.split(':');
      if (!existsSync(join(ROOT, path!))) problems.push(`${file}:${line}: ${path}: no such file`);
    }
    assert.deepEqual(problems, []);
  });

  it('the Layout section names every folder of src/ two levels down, one line each (deeper ones are parts of their module)', () => {
    const lines = readme.split('\n');
    const open = lines.indexOf('```', lines.indexOf('## Layout'));
    assert.ok(lines.includes('## Layout') && open >= 0, 'README.md has no Layout section with a block of folders');
    const listed = lines.slice(open + 1, lines.indexOf('```', open + 1)).map((line) => line.split(/\s+/)[0]!);
    const folders = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && dir.split('/').length < 3)
        .flatMap((entry) => [`${dir}/${entry.name}/`, ...folders(`${dir}/${entry.name}`)]);
    assert.deepEqual([...listed].sort(), folders('src').sort());
  });

  it('npm test and bash .ci/run do what the Tests section says', () => {
    const test = packageJson.scripts.test!;
    assert.match(test, /^(NODE_COMPILE_CACHE=\S+ )?node --test /, 'npm test runs Node\'s test runner');
    const globs = [...test.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
    for (const file of ['test/readme.test.ts', 'src/config.test.ts']) assert.ok(globs.some((g) => matchesGlob(file, g)), `npm test does not run ${file}`);
    // The quick check is a part of the suite: files npm test runs too, each of them there.
    const quick = packageJson.scripts['test:quick']!;
    assert.match(quick, /^(NODE_COMPILE_CACHE=\S+ )?node --test /);
    const quickFiles = quick.split(/\s+/).map((w) => w.replace(/^"|"$/g, '')).filter((w) => w.endsWith('.test.ts'));
    assert.ok(quickFiles.length >= 5, quick);
    for (const file of quickFiles) {
      if (!file.includes('*')) assert.ok(existsSync(join(ROOT, file)), `test:quick names ${file}, which does not exist`);
      assert.ok(globs.some((g) => matchesGlob(file, g)), `npm test does not run ${file}`);
    }
    const ci = readRepo('.ci/run');
    const steps = [/npm ci\b/, /typecheck/, /\blint\b/, /openapi:check/, /^npm test/m, /TEST_DATABASE_URL=\S+ npm test/, /\bchaos\b/, /\bsoak\b/];
    let from = 0;
    for (const step of steps) {
      const at = ci.slice(from).search(step);
      assert.ok(at >= 0, `.ci/run does not run ${step} after the steps before it`);
      from += at;
    }
  });
});
