// npm run chaos: the bank test over HTTP (after Jepsen's), with faults.
//
// Several service processes (API + worker) and an extra worker share one fresh PostgreSQL
// database. Clients move money at random among many accounts (transfers between them and to
// other institutions, PIX arriving from outside, refunds) while processes are killed with
// SIGKILL and restarted, and PostgreSQL itself is restarted once. Snapshots taken during the run
// check that money is conserved; at the end every acknowledged answer is reconciled against the
// database, and every notification against what a local HTTPS receiver got.
//
//   CHAOS_SECONDS=60 CHAOS_ACCOUNTS=12 CHAOS_CLIENTS=12 CHAOS_RESTART_PG=1 npm run chaos
//
// Exit code 0 only when every check holds.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { cpfCheckDigits } from '../src/lib/document.ts';
import { startWebhookReceiver } from '../test/webhook-receiver.ts';
import { databaseUrl, freePort, SERVICE_MAIN as MAIN } from './lib/processes.ts';

const SERVER = process.env.DATABASE_SERVER ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SECONDS = Number(process.env.CHAOS_SECONDS ?? 60);
const ACCOUNTS = Number(process.env.CHAOS_ACCOUNTS ?? 12);
const CLIENTS = Number(process.env.CHAOS_CLIENTS ?? 12);
const SERVE_PROCESSES = Number(process.env.CHAOS_PROCESSES ?? 2);
const KILL_EVERY_MS = Number(process.env.CHAOS_KILL_EVERY_MS ?? 2500);
const RESTART_PG = (process.env.CHAOS_RESTART_PG ?? '1') === '1';
const ADMIN = `chaos-admin-${randomUUID()}`;
const EVENT_TYPES = ['cash_in', 'cash_out', 'refund_in', 'refund_out'] as const;

const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 23)}] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const failures: string[] = [];
const crashes: string[] = [];
function check(ok: boolean, what: string): void {
  console.log(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

async function sql<T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

function cpf(n: number): string {
  const base = String(200_000_000 + n).slice(-9);
  return base + cpfCheckDigits(base);
}

// ---------------------------------------------------------------------------------------------
// Processes

interface Proc {
  name: string;
  args: string[];
  port: number | null;
  child: ChildProcess | null;
  /** Listening: clients only pick processes that are. */
  up: boolean;
  /** Set while this script stops the process itself; any other exit is a crash. */
  stopping: boolean;
  crashes: number;
  kills: number;
}

function startProcess(p: Proc, env: Record<string, string>): Promise<void> {
  const child = spawn(process.execPath, [MAIN, ...p.args], {
    env: { ...process.env, ...env, ...(p.port ? { PORT: String(p.port) } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  p.child = child;
  p.up = false;
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-8000);
  });
  child.on('exit', (code, signal) => {
    if (p.stopping) return;
    p.crashes++;
    if (process.env.CHAOS_CRASH_LOG) appendFileSync(process.env.CHAOS_CRASH_LOG, `--- ${p.name} ${code ?? signal}\n${stderr}\n`);
    crashes.push(`${p.name} exited by itself (${code ?? signal}): ${stderr.slice(-1500)}`);
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${p.name} did not start`)), 30_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (p.port === null || out.includes('listening on')) {
        clearTimeout(timer);
        p.up = true;
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (p.child === child) {
        p.child = null;
        p.up = false;
      }
      if (code !== null && code !== 0 && !out.includes('listening on')) reject(new Error(`${p.name} exited with ${code}: ${out.slice(-500)}`));
    });
    // A worker prints nothing when it is ready: give it a moment.
    if (p.port === null) setTimeout(resolve, 1500);
  });
}

async function stopProcess(p: Proc, signal: NodeJS.Signals): Promise<void> {
  const child = p.child;
  if (!child) return;
  p.stopping = true;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await Promise.race([exited, sleep(15_000)]);
  if (p.child === child) {
    child.kill('SIGKILL');
    await exited;
  }
  p.stopping = false;
}

async function waitForPostgres(): Promise<void> {
  for (let i = 0; i < 60; i++) {
    try {
      await sql(SERVER, 'select 1');
      return;
    } catch {
      await sleep(500);
    }
  }
  throw new Error('PostgreSQL did not come back');
}

function restartPostgres(): void {
  const version = readdirSync('/etc/postgresql').sort()[0]!;
  execFileSync('pg_ctlcluster', ['--skip-systemctl-redirect', version, 'main', 'restart', '-m', 'fast'], { stdio: 'ignore' });
}

// ---------------------------------------------------------------------------------------------
// HTTP

const http = new Agent({ connections: 64, keepAliveTimeout: 1000 });

interface Answer {
  status: number | null;
  body: Record<string, unknown>;
  error?: string;
}

async function call(port: number, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  try {
    const res = await request(`http://127.0.0.1:${port}${path}`, {
      method: method as 'GET',
      dispatcher: http,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headersTimeout: 20_000,
      bodyTimeout: 20_000,
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  } catch (error) {
    return { status: null, body: {}, error: (error as Error).message };
  }
}

// ---------------------------------------------------------------------------------------------
// The bank

interface Account {
  accountId: number;
  key: string;
  document: string;
  headers: Record<string, string>;
  secret: string;
}

interface TransferLog {
  account: Account;
  key: string;
  body: Record<string, unknown>;
  answers: Answer[];
}

interface RefundLog {
  account: Account;
  endToEndId: string;
  id: string;
  body: Record<string, unknown>;
  answers: Answer[];
}

interface IncomingLog {
  answer: Answer;
  amount: string;
}

async function main() {
  const name = `pix_chaos_${Date.now()}`;
  await sql(SERVER, `create database ${name}`);
  const url = databaseUrl(SERVER, name);
  const receiver = await startWebhookReceiver();
  const dataDir = mkdtempSync(join(tmpdir(), 'pix-chaos-'));
  const env = {
    DATABASE_URL: url,
    ADMIN_TOKEN: ADMIN,
    DATA_DIR: dataDir,
    SETTLEMENT_DELAY_MS: '300',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: receiver.caFile,
    LOG_LEVEL: 'error',
  };
  const procs: Proc[] = [];
  for (let i = 0; i < SERVE_PROCESSES; i++) procs.push({ name: `serve-${i}`, args: ['serve'], port: await freePort(), child: null, up: false, stopping: false, crashes: 0, kills: 0 });
  procs.push({ name: 'worker', args: ['worker'], port: null, child: null, up: false, stopping: false, crashes: 0, kills: 0 });
  const servers = procs.filter((p) => p.port !== null);
  const anyPort = () => {
    const up = servers.filter((p) => p.up);
    return pick(up.length > 0 ? up : servers).port!;
  };

  try {
    for (const p of procs) await startProcess(p, env);
    log(`${SERVE_PROCESSES} service processes and a worker on ${url.replace(/\/\/.*@/, '//')}; receiver ${receiver.origin}`);
    const admin = { authorization: `Bearer ${ADMIN}` };
    const port0 = servers[0]!.port!;

    // Other institutions' keys: one that settles, one that rejects every transfer.
    for (const [key, behavior] of [['chaos-ok@example.com', undefined], ['chaos-reject@example.com', 'reject']] as const) {
      const r = await call(port0, 'POST', '/sandbox/dict/keys', admin, {
        key,
        name: 'Outside',
        document: '11222333000181',
        ispb: '60746948',
        ...(behavior ? { behavior } : {}),
      });
      if (r.status !== 201) throw new Error(`dict key: ${r.status} ${JSON.stringify(r.body)}`);
    }

    const accounts: Account[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const document = cpf(i);
      const created = await call(port0, 'POST', '/admin/accounts', admin, { name: `Chaos ${i}`, document });
      const accountId = created.body.accountId as number;
      const cert = await issueCertificate({ commonName: `chaos-${i}` });
      await call(port0, 'POST', `/admin/accounts/${accountId}/certificates`, admin, { pem: cert.certPem });
      const key = (await call(port0, 'POST', `/admin/accounts/${accountId}/pix-keys`, admin, { type: 'evp' })).body.key as string;
      const certHeader = encodeURIComponent(cert.certPem);
      const token = await call(port0, 'POST', '/api/auth/token', { 'x-ssl-client-cert': certHeader }, {
        clientId: created.body.clientId,
        clientSecret: created.body.clientSecret,
      });
      const headers = { authorization: `Bearer ${token.body.access_token as string}`, 'x-ssl-client-cert': certHeader };
      for (const eventType of EVENT_TYPES) {
        const r = await call(port0, 'POST', '/api/webhooks', headers, { url: `${receiver.origin}/${accountId}/${eventType}`, eventType });
        if (r.status !== 201) throw new Error(`webhook: ${r.status} ${JSON.stringify(r.body)}`);
      }
      const secret = (await call(port0, 'GET', '/api/webhooks/signing-secret', headers)).body.secret as string;
      accounts.push({ accountId, key, document, headers, secret });
    }
    log(`${ACCOUNTS} accounts, each with a key, a certificate, a token and webhooks for ${EVENT_TYPES.join(', ')}`);

    const transfers: TransferLog[] = [];
    const refunds: RefundLog[] = [];
    const incoming: IncomingLog[] = [];
    const received = new Map<number, string[]>(); // account -> end-to-end ids of PIX it received (acknowledged)

    async function receive(target: Account, amount: string) {
      const r = await call(anyPort(), 'POST', '/sandbox/pix/incoming', admin, {
        pixKey: target.key,
        amount,
        payer: { name: 'Outside payer', document: '52998224725' },
      });
      incoming.push({ answer: r, amount });
      if (r.status === 201) received.set(target.accountId, [...(received.get(target.accountId) ?? []), r.body.endToEndId as string]);
    }
    for (const a of accounts) await receive(a, '500.00');

    // Faults.
    let running = true;
    const faults = (async () => {
      const started = Date.now();
      let pgRestarted = false;
      while (running) {
        await sleep(KILL_EVERY_MS * (0.5 + Math.random()));
        if (!running) break;
        if (RESTART_PG && !pgRestarted && Date.now() - started > (SECONDS * 1000) / 2) {
          pgRestarted = true;
          log('restarting PostgreSQL (fast: active transactions are aborted)');
          restartPostgres();
          await waitForPostgres();
          log('PostgreSQL is back');
          continue;
        }
        for (const crashed of procs.filter((p) => !p.child)) await startProcess(crashed, env).catch(() => undefined);
        // At random among those killed least so far, so a short run (CI's) kills every kind of
        // process, API and worker, and not only whichever the dice favoured.
        const fewest = Math.min(...procs.map((p) => p.kills));
        const victim = pick(procs.filter((p) => p.kills === fewest));
        if (!victim.child) continue;
        victim.kills++;
        log(`kill -9 ${victim.name}`);
        await stopProcess(victim, 'SIGKILL');
        await sleep(200 + Math.random() * 800);
        await startProcess(victim, env).catch((e: unknown) => log(`restart of ${victim.name} failed: ${(e as Error).message}`));
      }
    })();

    // Money conservation, checked on snapshots while everything runs: in one snapshot, the ledger
    // sums to zero, nothing is negative, and the account holders hold what came in from outside
    // less what left.
    const snapshots: string[] = [];
    const snapshotter = (async () => {
      while (running) {
        await sleep(2000);
        try {
          const [s] = await sql<{ total: string; negative: number; holders: string; net_in: string }>(
            url,
            `select (select sum(balance) from ledger_accounts)::text as total,
                    (select count(*)::int from ledger_accounts where balance < 0 and not allow_negative) as negative,
                    (select sum(balance) from ledger_accounts where account_id is not null)::text as holders,
                    (select coalesce(sum(case when type in ('PAYMENT', 'REFUND_OUT') then amount_centavos else -amount_centavos end), 0)
                       from transactions
                      where counterpart_account_id is null and status = 'CONFIRMED')::text as net_in`,
          );
          const ok = s!.total === '0' && s!.negative === 0 && s!.holders === s!.net_in;
          snapshots.push(ok ? 'ok' : `total ${s!.total}, negative ${s!.negative}, holders ${s!.holders} vs net in ${s!.net_in}`);
        } catch {
          // PostgreSQL restarting
        }
      }
    })();

    // Clients.
    const deadline = Date.now() + SECONDS * 1000;
    let operations = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (Date.now() < deadline) {
          operations++;
          const me = pick(accounts);
          const roll = Math.random();
          if (roll < 0.5) {
            const other = pick(accounts.filter((a) => a !== me));
            const high = Math.random() < 0.3;
            const body = {
              pixKey: other.key,
              payment: { currency: 'BRL', amount: Math.floor(1 + Math.random() * 2000) / 100 },
              ...(high ? { priority: 'HIGH', creditorDocument: other.document } : {}),
            };
            const entry: TransferLog = { account: me, key: randomUUID(), body, answers: [] };
            transfers.push(entry);
            entry.answers.push(await call(anyPort(), 'POST', '/dict/pix', { ...me.headers, 'x-idempotency-key': entry.key }, body));
          } else if (roll < 0.7) {
            const body = { pixKey: Math.random() < 0.8 ? 'chaos-ok@example.com' : 'chaos-reject@example.com', payment: { currency: 'BRL', amount: Math.floor(1 + Math.random() * 1000) / 100 } };
            const entry: TransferLog = { account: me, key: randomUUID(), body, answers: [] };
            transfers.push(entry);
            entry.answers.push(await call(anyPort(), 'POST', '/dict/pix', { ...me.headers, 'x-idempotency-key': entry.key }, body));
          } else if (roll < 0.85) {
            await receive(me, `${Math.floor(1 + Math.random() * 30)}.${String(Math.floor(Math.random() * 100)).padStart(2, '0')}`);
          } else {
            const mine = received.get(me.accountId) ?? [];
            if (mine.length === 0) continue;
            const entry: RefundLog = { account: me, endToEndId: pick(mine), id: randomUUID().replace(/-/g, '').slice(0, 20), body: { valor: '0.50' }, answers: [] };
            refunds.push(entry);
            entry.answers.push(await call(anyPort(), 'PUT', `/pix/${entry.endToEndId}/devolucao/${entry.id}`, me.headers, entry.body));
          }
        }
      }),
    );
    running = false;
    await faults;
    await snapshotter;
    for (const p of procs) if (!p.child) await startProcess(p, env);
    log(`${operations} operations in ${SECONDS} s; kills: ${procs.map((p) => `${p.name} ${p.kills}`).join(', ')}`);

    // Idempotency storm: 100 concurrent requests with one key.
    const stormKey = randomUUID();
    const stormer = accounts[0]!;
    const stormBody = { pixKey: 'chaos-ok@example.com', payment: { currency: 'BRL', amount: 0.01 } };
    const storm = await Promise.all(
      Array.from({ length: 100 }, () => call(anyPort(), 'POST', '/dict/pix', { ...stormer.headers, 'x-idempotency-key': stormKey }, stormBody)),
    );

    const firstAnswers = new Map<string, number>();
    for (const e of [...transfers, ...refunds]) {
      const a = e.answers[0]!;
      const label = a.status === null ? 'no answer' : String(a.status);
      firstAnswers.set(label, (firstAnswers.get(label) ?? 0) + 1);
    }
    log(`first answers: ${JSON.stringify(Object.fromEntries([...firstAnswers].sort()))}`);

    // Requests whose outcome is unknown (no answer, or 5xx) are sent again with the same
    // idempotency key or refund id, until they get a definite answer.
    const definite = (a: Answer | undefined) => a !== undefined && a.status !== null && a.status < 500 && a.status !== 409;
    let retried = 0;
    for (let round = 0; round < 20; round++) {
      const pending = [...transfers.filter((t) => !definite(t.answers.at(-1))), ...refunds.filter((r) => !definite(r.answers.at(-1)))];
      if (pending.length === 0) break;
      // Several at a time, as the clients sent them.
      const queue = [...pending];
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          for (let entry = queue.shift(); entry !== undefined; entry = queue.shift()) {
            retried++;
            entry.answers.push(
              'key' in entry
                ? await call(anyPort(), 'POST', '/dict/pix', { ...entry.account.headers, 'x-idempotency-key': entry.key }, entry.body)
                : await call(anyPort(), 'PUT', `/pix/${entry.endToEndId}/devolucao/${entry.id}`, entry.account.headers, entry.body),
            );
          }
        }),
      );
      await sleep(500);
    }

    // Quiesce: settle everything, then let deliveries (and their retries) finish.
    for (let i = 0; i < 20; i++) {
      const r = await call(port0, 'POST', '/sandbox/settle', admin);
      const [q] = await sql<{ n: number }>(url, 'select count(*)::int as n from settlement_queue');
      if (r.status === 200 && q!.n === 0) break;
      await sleep(500);
    }
    let pendingDeliveries = -1;
    for (let i = 0; i < 90; i++) {
      const [d] = await sql<{ n: number }>(url, `select count(*)::int as n from webhook_deliveries where status = 'PENDING'`);
      pendingDeliveries = d!.n;
      if (pendingDeliveries === 0) break;
      await sleep(1000);
    }

    console.log('\nchecks');
    check(crashes.length === 0, `no process exited unless killed (${crashes.length})${crashes.length ? `: ${crashes[0]}` : ''}`);
    const bad = snapshots.filter((s) => s !== 'ok');
    check(snapshots.length > 0 && bad.length === 0, `${snapshots.length} snapshots during the run: ledger sums to 0, nothing negative, holders = money in - money out${bad.length ? ` (${bad[0]})` : ''}`);

    const [ledger] = await sql<{ total: string; negative: number; mismatched: number }>(
      url,
      `select (select sum(balance) from ledger_accounts)::text as total,
              (select count(*)::int from ledger_accounts where balance < 0 and not allow_negative) as negative,
              (select count(*)::int from ledger_accounts a
                where a.balance <> coalesce((select sum(amount_centavos) from postings where credit_account_id = a.id), 0)
                                 - coalesce((select sum(amount_centavos) from postings where debit_account_id = a.id), 0)) as mismatched`,
    );
    check(ledger!.total === '0', `sum of all balances is 0 (${ledger!.total})`);
    check(ledger!.negative === 0, `no negative balance (${ledger!.negative})`);
    check(ledger!.mismatched === 0, `every balance equals its postings (${ledger!.mismatched} differ)`);
    const [conservation] = await sql<{ holders: string; net_in: string }>(
      url,
      `select (select sum(balance) from ledger_accounts where account_id is not null)::text as holders,
              (select coalesce(sum(case when type in ('PAYMENT', 'REFUND_OUT') then amount_centavos else -amount_centavos end), 0)
                 from transactions where counterpart_account_id is null and status = 'CONFIRMED')::text as net_in`,
    );
    check(conservation!.holders === conservation!.net_in, `holders' money ${conservation!.holders} = what came in less what left ${conservation!.net_in}`);

    // Every transfer the clients sent, against the database.
    const rows = await sql<{ account_id: string; idempotency_key: string; n: number; status: string; amount: string; settles: number; receivers: number }>(
      url,
      `with settles as (
         select reference, count(*)::int as n from postings
          where kind in ('transfer_settle', 'transfer_settle_internal', 'transfer_void') group by reference)
       select t.account_id::text, t.idempotency_key, count(*) over (partition by t.account_id, t.idempotency_key)::int as n, t.status,
              t.amount_centavos::text as amount, coalesce(s.n, 0) as settles,
              (select count(*)::int from transactions r where r.end_to_end_id = t.end_to_end_id and r.type = 'PAYMENT') as receivers
         from transactions t left join settles s on s.reference = t.end_to_end_id
        where t.type = 'WITHDRAW'`,
    );
    const byKey = new Map(rows.map((r) => [`${r.account_id}:${r.idempotency_key}`, r]));
    const sentKeys = new Set([...transfers.map((t) => `${t.account.accountId}:${t.key}`), `${stormer.accountId}:${stormKey}`]);
    const acked = transfers.filter((t) => t.answers.some((a) => a.status === 201));
    const lost = acked.filter((t) => !byKey.has(`${t.account.accountId}:${t.key}`));
    check(lost.length === 0, `${acked.length} acknowledged transfers (201), none lost (${lost.length} missing)`);
    const refused = transfers.filter((t) => t.answers.at(-1)?.status === 422 && byKey.has(`${t.account.accountId}:${t.key}`));
    check(refused.length === 0, `transfers answered 422 left nothing behind (${refused.length} did)`);
    const unsettled = transfers.filter((t) => !definite(t.answers.at(-1)));
    check(unsettled.length === 0, `every request got a definite answer in the end (${retried} resent; ${unsettled.length} still unknown)`);
    check(rows.every((r) => r.n === 1), 'each idempotency key made at most one transfer');
    const invented = rows.filter((r) => !sentKeys.has(`${r.account_id}:${r.idempotency_key}`));
    check(invented.length === 0, `no transfer the clients did not ask for (${invented.length})`);
    const answerMismatch = acked.filter((t) => {
      const answers = t.answers.filter((a) => a.status === 201);
      return answers.some((a) => JSON.stringify(a.body) !== JSON.stringify(answers[0]!.body));
    });
    check(answerMismatch.length === 0, `repeated requests got the same answer (${answerMismatch.length} differ)`);
    check(rows.every((r) => r.status !== 'PENDING'), `every transfer settled or failed (${rows.filter((r) => r.status === 'PENDING').length} pending)`);
    const twice = rows.filter((r) => r.settles !== 1);
    check(twice.length === 0, `each transfer settled (or voided) exactly once (${twice.length} not)`);
    const internal = rows.filter((r) => r.status === 'CONFIRMED' && r.receivers > 1);
    check(internal.length === 0, `no receiver credited twice (${internal.length})`);

    const refundsAcked = refunds.filter((r) => r.answers.some((a) => a.status === 201 || a.status === 200));
    const refundRows = await sql<{ refund_id: string; status: string }>(url, `select refund_id, status from refunds where refund_id not like 'MED-%'`);
    const refundIds = new Set(refundRows.map((r) => r.refund_id));
    check(refundsAcked.every((r) => refundIds.has(r.id)), `${refundsAcked.length} acknowledged refunds, none lost`);
    check(refundRows.every((r) => r.status !== 'EM_PROCESSAMENTO'), 'every refund settled or failed');
    const incomingAcked = incoming.filter((i) => i.answer.status === 201);
    const [inRows] = await sql<{ n: number }>(
      url,
      `select count(*)::int as n from transactions where type = 'PAYMENT' and end_to_end_id = any($1::text[])`,
      [incomingAcked.map((i) => i.answer.body.endToEndId as string)],
    );
    check(inRows!.n === incomingAcked.length, `${incomingAcked.length} acknowledged incoming PIX, each recorded once (${inRows!.n})`);

    // Notifications.
    const outbox = await sql<{ message_id: string; account_id: string; event_type: string; transaction_id: string }>(
      url,
      `select message_id, account_id::text, event_type, transaction_id::text from outbox where account_id = any($1::int8[])`,
      [accounts.map((a) => a.accountId)],
    );
    const [withoutNotice] = await sql<{ n: number }>(
      url,
      `select count(*)::int as n from transactions t where t.account_id = any($1::int8[]) and t.status <> 'PENDING'
          and not exists (select 1 from outbox o where o.transaction_id = t.id)`,
      [accounts.map((a) => a.accountId)],
    );
    check(withoutNotice!.n === 0, `every finished movement of the accounts has its notification (${withoutNotice!.n} without)`);
    const [duplicateNotices] = await sql<{ n: number }>(
      url,
      `select count(*)::int as n from (select transaction_id, event_type from outbox where transaction_id is not null
          group by 1, 2 having count(*) > 1) d`,
    );
    check(duplicateNotices!.n === 0, `no movement notified twice (${duplicateNotices!.n})`);
    check(pendingDeliveries === 0, `every delivery finished (${pendingDeliveries} pending)`);
    const secrets = new Map(accounts.map((a) => [String(a.accountId), new Webhook(a.secret)]));
    const seen = new Set<string>();
    let badSignatures = 0;
    for (const hook of receiver.received) {
      const account = hook.path.split('/')[1]!;
      try {
        secrets.get(account)!.verify(hook.body, hook.headers);
      } catch {
        badSignatures++;
      }
      seen.add(hook.headers['webhook-id']!);
    }
    const ids = new Set(outbox.map((o) => o.message_id));
    const undelivered = outbox.filter((o) => !seen.has(o.message_id));
    check(undelivered.length === 0, `all ${outbox.length} notifications reached the receiver at least once (${undelivered.length} did not)`);
    const strangers = [...seen].filter((id) => !ids.has(id));
    check(strangers.length === 0, `no webhook for a movement that did not happen (${strangers.length})`);
    check(badSignatures === 0, `${receiver.received.length} deliveries, every signature valid (${badSignatures} bad); ${receiver.received.length - seen.size} were repeats`);

    const stormCreated = storm.filter((a) => a.status === 201);
    const stormOthers = storm.filter((a) => a.status !== 201 && a.status !== 409);
    const [stormRows] = await sql<{ n: number }>(url, 'select count(*)::int as n from transactions where account_id = $1 and idempotency_key = $2', [stormer.accountId, stormKey]);
    check(
      stormRows!.n === 1 && stormOthers.length === 0 && stormCreated.every((a) => JSON.stringify(a.body) === JSON.stringify(stormCreated[0]!.body)),
      `idempotency storm: 100 concurrent requests with one key -> ${stormRows!.n} transfer, ${stormCreated.length} x 201 (one answer), ${storm.length - stormCreated.length - stormOthers.length} x 409, ${stormOthers.length} other`,
    );
  } finally {
    for (const p of procs) await stopProcess(p, 'SIGTERM');
    await http.close();
    await receiver.close();
    rmSync(dataDir, { recursive: true, force: true });
    await waitForPostgres();
    await sql(SERVER, `drop database if exists ${name} with (force)`);
  }
  console.log(`\n${failures.length === 0 ? 'chaos: every check held' : `chaos: ${failures.length} check(s) failed`}`);
  if (failures.length > 0) process.exitCode = 1;
}

await main();
