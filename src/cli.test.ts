import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { randomCpf } from '../test/factories.ts';
import { onPostgres, startTestApp, type TestApp } from '../test/harness.ts';
import { exitsByItself, failsWithOneLine, killAll, run } from '../test/processes.ts';
import { runOperatorCommand, UsageError } from './cli.ts';
import { AppError } from './http/errors.ts';
import { issueCertificate, type IssuedCertificate } from './lib/certificate-authority.ts';
import { accountNumberFor } from './modules/accounts/service.ts';

interface Created {
  accountId: number;
  branch: string;
  accountNumber: string;
  clientId: string;
  clientSecret: string;
}

const EVP = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('operator CLI (runOperatorCommand)', () => {
  let t: TestApp;
  let dir: string;
  let cert: IssuedCertificate;
  let pemFile: string;
  let created: Created;
  let fingerprint: string;

  /** Runs a command and parses what it prints. */
  async function run<T>(...args: string[]): Promise<T> {
    const out = await runOperatorCommand(t.db, t.config, args);
    assert.equal(typeof out, 'string');
    return JSON.parse(out) as T;
  }

  function token(clientSecret: string, certificate: IssuedCertificate = cert) {
    return t.app.inject({
      method: 'POST',
      url: '/api/auth/token',
      headers: { 'x-ssl-client-cert': encodeURIComponent(certificate.certPem) },
      payload: { clientId: created.clientId, clientSecret },
    });
  }

  before(async () => {
    t = await startTestApp();
    dir = mkdtempSync(join(tmpdir(), 'pix-cli-test-'));
    cert = await issueCertificate({ commonName: 'cli-client' });
    pemFile = join(dir, 'client.pem');
    writeFileSync(pemFile, cert.certPem);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t?.close();
  });

  it('accounts create prints the account and its credentials as JSON', async () => {
    const document = randomCpf();
    const punctuated = `${document.slice(0, 3)}.${document.slice(3, 6)}.${document.slice(6, 9)}-${document.slice(9)}`;
    const out = await runOperatorCommand(t.db, t.config, ['accounts', 'create', '--name', 'Cli Titular', '--document', punctuated]);
    created = JSON.parse(out) as Created;
    assert.deepEqual(Object.keys(created).sort(), ['accountId', 'accountNumber', 'branch', 'clientId', 'clientSecret']);
    assert.equal(typeof created.accountId, 'number');
    assert.equal(created.branch, '0001');
    assert.equal(created.accountNumber, accountNumberFor(BigInt(created.accountId)));
    assert.match(created.clientId, /^pix_/);
    assert.equal(typeof created.clientSecret, 'string');
    const row = await t.db.selectFrom('accounts').select(['name', 'document', 'client_id']).where('id', '=', BigInt(created.accountId)).executeTakeFirstOrThrow();
    assert.deepEqual(row, { name: 'Cli Titular', document, client_id: created.clientId });
  });

  it("accounts create takes the holder's address, all four parts; address set changes it", async () => {
    const parts = ['--logradouro', 'Rua da Aurora, 10', '--cidade', 'Recife', '--uf', 'PE', '--cep', '50050-000'];
    const made = await run<Created>('accounts', 'create', '--name', 'Cli Com Endereco', '--document', randomCpf(), ...parts);
    const stored = async () => (await t.db.selectFrom('accounts').select('address').where('id', '=', BigInt(made.accountId)).executeTakeFirstOrThrow()).address;
    assert.deepEqual(await stored(), { logradouro: 'Rua da Aurora, 10', cidade: 'Recife', uf: 'PE', cep: '50050000' });
    const set = await run<{ address: unknown }>('address', 'set', '--account', String(made.accountId), '--logradouro', 'Av. Boa Viagem, 5', '--cidade', 'Recife', '--uf', 'pe', '--cep', '51020000');
    assert.deepEqual(set.address, { logradouro: 'Av. Boa Viagem, 5', cidade: 'Recife', uf: 'PE', cep: '51020000' });
    assert.deepEqual(await stored(), set.address);
    await assert.rejects(run('address', 'set', '--account', String(made.accountId), '--logradouro', 'Rua X', '--cidade', 'Recife', '--uf', 'PE'), /--cep is required/);
    await assert.rejects(run('accounts', 'create', '--name', 'Meio Endereco', '--document', randomCpf(), '--uf', 'PE'), /--logradouro is required/);
    await assert.rejects(run('address', 'set', '--account', String(made.accountId), ...parts.slice(0, 6), '--cep', '123'), (e: unknown) => e instanceof AppError && e.statusCode === 400);
  });

  it('certificates link reads the PEM file; the account then gets a token over HTTP', async () => {
    const linked = await run<{ fingerprint: string }>('certificates', 'link', '--account', String(created.accountId), '--pem-file', pemFile);
    fingerprint = createHash('sha256').update(Buffer.from(cert.cert.rawData)).digest('hex');
    assert.deepEqual(linked, { fingerprint });
    // Linking again is harmless.
    assert.deepEqual(await run('certificates', 'link', '--account', String(created.accountId), '--pem-file', pemFile), { fingerprint });

    const res = await token(created.clientSecret);
    assert.equal(res.statusCode, 201, res.body);
    const accessToken = res.json<{ access_token: string }>().access_token;
    const balance = await t.app.inject({
      method: 'GET',
      url: '/balance',
      headers: { authorization: `Bearer ${accessToken}`, 'x-ssl-client-cert': encodeURIComponent(cert.certPem) },
    });
    assert.equal(balance.statusCode, 200, balance.body);
    assert.equal(balance.json().netBalance, 0);
  });

  it('pix-keys add registers evp, email and the holder cpf in the directory', async () => {
    const account = String(created.accountId);
    const evp = await run<{ key: string; type: string }>('pix-keys', 'add', '--account', account, '--type', 'evp');
    assert.equal(evp.type, 'evp');
    assert.match(evp.key, EVP);
    assert.deepEqual(await run('pix-keys', 'add', '--account', account, '--type', 'email', '--key', 'Cli@Example.com'), { key: 'cli@example.com', type: 'email' });
    const holder = await t.db.selectFrom('accounts').select('document').where('id', '=', BigInt(created.accountId)).executeTakeFirstOrThrow();
    assert.deepEqual(await run('pix-keys', 'add', '--account', account, '--type', 'cpf'), { key: holder.document, type: 'cpf' });

    const rows = await t.db.selectFrom('dict_keys').select(['key', 'key_type', 'account_id', 'ispb']).where('account_id', '=', BigInt(created.accountId)).orderBy('key').execute();
    assert.deepEqual(
      rows,
      [
        { key: evp.key, key_type: 'EVP', account_id: BigInt(created.accountId), ispb: t.config.pspIspb },
        { key: 'cli@example.com', key_type: 'EMAIL', account_id: BigInt(created.accountId), ispb: t.config.pspIspb },
        { key: holder.document, key_type: 'CPF', account_id: BigInt(created.accountId), ispb: t.config.pspIspb },
      ].sort((x, y) => (x.key < y.key ? -1 : 1)),
    );
  });

  it('client-secret rotate prints new credentials; only the new secret works over HTTP', async () => {
    const rotated = await run<{ clientId: string; clientSecret: string }>('client-secret', 'rotate', '--account', String(created.accountId));
    assert.deepEqual(Object.keys(rotated).sort(), ['clientId', 'clientSecret']);
    assert.equal(rotated.clientId, created.clientId);
    assert.notEqual(rotated.clientSecret, created.clientSecret);
    assert.equal((await token(created.clientSecret)).statusCode, 401);
    assert.equal((await token(rotated.clientSecret)).statusCode, 201);
    created = { ...created, clientSecret: rotated.clientSecret };
  });

  it('certificates unlink removes the link; the certificate no longer gets a token', async () => {
    const account = String(created.accountId);
    assert.deepEqual(await run('certificates', 'unlink', '--account', account, '--fingerprint', fingerprint), { unlinked: fingerprint });
    assert.equal((await t.db.selectFrom('account_certificates').select('id').where('fingerprint', '=', fingerprint).execute()).length, 0);
    assert.equal((await token(created.clientSecret)).statusCode, 403);
    await assert.rejects(run('certificates', 'unlink', '--account', account, '--fingerprint', fingerprint), (e: unknown) => e instanceof AppError && e.statusCode === 404);
  });

  it('certificates link refuses a certificate expired or not yet valid (400), and links nothing', async () => {
    const now = Date.now();
    for (const validity of [
      { notBefore: new Date(now - 30 * 86_400_000), notAfter: new Date(now - 60_000) },
      { notBefore: new Date(now + 3_600_000), notAfter: new Date(now + 30 * 86_400_000) },
    ]) {
      const outside = await issueCertificate({ commonName: 'cli-outside', ...validity });
      const file = join(dir, 'outside.pem');
      writeFileSync(file, outside.certPem);
      await assert.rejects(run('certificates', 'link', '--account', String(created.accountId), '--pem-file', file), (e: unknown) => {
        assert.ok(e instanceof AppError && e.statusCode === 400 && e.code === 'INVALID_CERTIFICATE', String(e));
        return true;
      });
      const fingerprint = createHash('sha256').update(Buffer.from(outside.cert.rawData)).digest('hex');
      assert.equal((await t.db.selectFrom('account_certificates').select('id').where('fingerprint', '=', fingerprint).execute()).length, 0);
    }
  });

  it('signing-keys list, rotate and retire: the service signs with the new key, and refuses the retired one', async () => {
    type Key = { kid: string; status: string; retiredAt: string | null };
    const before = await run<{ data: Key[] }>('signing-keys', 'list');
    const previous = before.data.find((k) => k.status === 'signing')!;
    assert.ok(previous, JSON.stringify(before));
    const rotated = await run<Key>('signing-keys', 'rotate');
    assert.equal(rotated.status, 'signing');
    const listed = await run<{ data: Key[] }>('signing-keys', 'list');
    assert.deepEqual(
      listed.data.slice(0, 2).map((k) => [k.kid, k.status]),
      [
        [rotated.kid, 'signing'],
        [previous.kid, 'verifying'],
      ],
    );
    const retired = await run<Key>('signing-keys', 'retire', '--kid', previous.kid);
    assert.equal(retired.status, 'retired');
    await assert.rejects(run('signing-keys', 'retire', '--kid', rotated.kid), (e: unknown) => e instanceof AppError && e.statusCode === 409);
    await assert.rejects(run('signing-keys', 'retire', '--kid', 'nokey'), (e: unknown) => e instanceof AppError && e.statusCode === 404);
    // A thumbprint may begin with a dash (1 in 64 do): it is a value, not an option.
    await assert.rejects(run('signing-keys', 'retire', '--kid', '-nokey'), (e: unknown) => e instanceof AppError && e.statusCode === 404);
    await assert.rejects(run('signing-keys', 'retire', '--kid', '--account', '1'), UsageError);
  });

  it('bad usage throws UsageError and changes nothing', async () => {
    const accountsBefore = (await t.db.selectFrom('accounts').select('id').execute()).length;
    const account = String(created.accountId);
    const cases: [string[], RegExp][] = [
      [[], /unknown command/],
      [['accounts'], /unknown command/],
      [['accounts', 'delete', '--account', account], /unknown command/],
      [['keys', 'add'], /unknown command/],
      [['accounts', 'create', '--name', 'Sem Documento'], /--document is required/],
      [['accounts', 'create', '--document', randomCpf()], /--name is required/],
      [['accounts', 'create', '--name', '', '--document', randomCpf()], /--name is required/],
      [['accounts', 'create', '--name', 'X', '--document', randomCpf(), '--bogus', '1'], /bogus/],
      [['accounts', 'create', '--name', 'X', '--document', randomCpf(), 'stray'], /stray/],
      [['accounts', 'create', '--document', randomCpf(), '--name'], /--name/],
      [['certificates', 'link', '--account', account], /--pem-file is required/],
      [['certificates', 'link', '--account', account, '--pem-file', join(dir, 'missing.pem')], /missing\.pem/],
      [['certificates', 'link', '--pem-file', pemFile], /--account is required/],
      [['certificates', 'unlink', '--account', account], /--fingerprint is required/],
      [['pix-keys', 'add', '--account', account], /--type is required/],
      [['pix-keys', 'add', '--account', 'abc', '--type', 'evp'], /--account must be a numeric/],
      [['pix-keys', 'add', '--account', '0', '--type', 'evp'], /--account must be a numeric/],
      [['client-secret', 'rotate'], /--account is required/],
      [['client-secret', 'rotate', '--account', '-1'], /--account/],
      [['signing-keys', 'retire'], /--kid is required/],
      [['signing-keys', 'retire', '--kid', 'a b'], /--kid must be a key id/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(runOperatorCommand(t.db, t.config, args), (e: unknown) => {
        assert.ok(e instanceof UsageError, `${args.join(' ')}: ${String(e)}`);
        assert.match(e.message, message, args.join(' '));
        return true;
      });
    }
    assert.equal((await t.db.selectFrom('accounts').select('id').execute()).length, accountsBefore);
  });

  it('rules of the operation itself are AppErrors with the API status', async () => {
    const account = String(created.accountId);
    const cases: [string[], number][] = [
      [['accounts', 'create', '--name', 'Digito', '--document', '12345678900'], 400],
      [['pix-keys', 'add', '--account', account, '--type', 'iban', '--key', 'x'], 400],
      [['pix-keys', 'add', '--account', account, '--type', 'toString'], 400],
      [['pix-keys', 'add', '--account', account, '--type', '__proto__', '--key', 'x'], 400],
      [['pix-keys', 'add', '--account', account, '--type', 'email', '--key', 'cli@example.com'], 409],
      [['pix-keys', 'add', '--account', '987654321', '--type', 'evp'], 404],
      [['client-secret', 'rotate', '--account', '987654321'], 404],
      [['certificates', 'link', '--account', '987654321', '--pem-file', pemFile], 404],
    ];
    const badPem = join(dir, 'bad.pem');
    writeFileSync(badPem, cert.keyPem);
    cases.push([['certificates', 'link', '--account', account, '--pem-file', badPem], 400]);
    for (const [args, status] of cases) {
      await assert.rejects(runOperatorCommand(t.db, t.config, args), (e: unknown) => {
        assert.ok(e instanceof AppError, `${args.join(' ')}: ${String(e)}`);
        assert.equal(e.statusCode, status, args.join(' '));
        return true;
      });
    }
  });
});

describe('operator commands as processes (npx pix-api ...)', () => {
  const dirs: string[] = [];
  after(() => {
    killAll();
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'pix-cli-process-'));
    dirs.push(d);
    return d;
  };

  it('run on the embedded database, print their answer, and exit by themselves releasing it', async () => {
    const dataDir = tempDir();
    const create = run(['accounts', 'create', '--name', 'Ana Processo', '--document', randomCpf()], { DATA_DIR: dataDir });
    assert.equal(await exitsByItself(create), 0, create.stderr());
    const created = JSON.parse(create.stdout()) as Created;
    assert.equal(created.accountId, 1);
    assert.ok(!existsSync(join(dataDir, 'pgdata.lock')), 'the lock is released');

    // A rule of the operation: one line with the API's status.
    const missing = await failsWithOneLine(['pix-keys', 'add', '--account', '99', '--type', 'evp'], { DATA_DIR: dataDir });
    assert.equal(missing, 'Error 404: Account 99 not found');

    const keys = run(['pix-keys', 'add', '--account', '1', '--type', 'evp'], { DATA_DIR: dataDir });
    assert.equal(await exitsByItself(keys), 0, keys.stderr());
    assert.match((JSON.parse(keys.stdout()) as { key: string }).key, EVP);
    assert.ok(!existsSync(join(dataDir, 'pgdata.lock')));
  });

  it('fail in one line on an embedded database another process holds, and leave its lock alone', async () => {
    const dataDir = tempDir();
    // This test's own process holds it, as a running service would.
    const lock = join(dataDir, 'pgdata.lock');
    writeFileSync(lock, String(process.pid));
    for (const args of [['accounts', 'create', '--name', 'Ana', '--document', randomCpf()], ['migrate'], ['worker']]) {
      const line = await failsWithOneLine(args, { DATA_DIR: dataDir });
      assert.match(line, new RegExp(`^the embedded database in ${dataDir} is in use by process ${process.pid}: stop that process, use the operator API`), args[0]);
      assert.equal(readFileSync(lock, 'utf8'), String(process.pid));
    }
  });

  it('a database that does not exist: one line with the createdb command', { skip: !onPostgres && 'needs TEST_DATABASE_URL' }, async () => {
    const server = new URL(process.env.TEST_DATABASE_URL!);
    server.pathname = `/pix_cli_missing_${process.pid}`;
    const line = await failsWithOneLine(['client-secret', 'rotate', '--account', '1'], { DATABASE_URL: server.toString() });
    assert.match(line, new RegExp(`^database "pix_cli_missing_${process.pid}" does not exist on PostgreSQL at .*: create it \\(createdb -h \\S+ -p \\d+ -U \\S+ pix_cli_missing_${process.pid}\\)`));
  });
});
