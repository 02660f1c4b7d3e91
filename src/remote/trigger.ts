import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { centavosToNumber, formatCentavos, numberToCentavos, parseDecimal } from '../lib/money.ts';
import { adminHeaders, answerError, call, REMOTE_OPTIONS, REMOTE_USAGE, remoteFrom, RemoteError, type Answer, type Remote } from './connection.ts';

/**
 * `pix-api trigger <event>`: makes one of the service's events happen for an account in a running
 * sandbox, through the sandbox's own routes (`/sandbox/*`, the admin token) and, where the account
 * itself acts (a transfer, a charge, a refund), its own routes with a token from its credentials:
 * what the account's webhooks then receive is what production sends.
 */

const OPTIONS = {
  ...REMOTE_OPTIONS,
  list: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  amount: { type: 'string' },
  key: { type: 'string' },
  reason: { type: 'string' },
} as const;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
type Json = Record<string, unknown>;

/** What a trigger works with: the sandbox, the account, and the options given. */
class Context {
  readonly remote: Remote;
  readonly amount: string;
  readonly reason: string | undefined;
  readonly #key: string | undefined;
  readonly #dir: string;
  #token: Promise<Record<string, string>> | undefined;
  #pixKey: Promise<string> | undefined;

  constructor(remote: Remote, options: { amount: string; reason: string | undefined; key: string | undefined; dir: string }) {
    this.remote = remote;
    this.amount = options.amount;
    this.reason = options.reason;
    this.#key = options.key;
    this.#dir = options.dir;
  }

  /** A `/sandbox/*` (or `/admin/*`) call with the admin token; its body, after checking the status. */
  async admin(what: string, method: Method, path: string, body?: unknown, ...statuses: number[]): Promise<Json> {
    return expect(what, await call(this.remote, method, path, { headers: adminHeaders(this.remote), ...(body === undefined ? {} : { body }) }), statuses);
  }

  /** One of the account's own routes, with a token asked for with its credentials. */
  async account(what: string, method: Method, path: string, body: unknown, headers: Record<string, string>, ...statuses: number[]): Promise<Json> {
    const auth = await this.#accountHeaders(what);
    return expect(what, await call(this.remote, method, path, { headers: { ...auth, ...headers }, body }), statuses);
  }

  #accountHeaders(what: string): Promise<Record<string, string>> {
    const credentials = this.remote.credentials;
    if (!credentials) {
      return Promise.reject(
        new RemoteError(`${what} is the account's own act, and needs its credentials: the demo's files (--dir with token-request.json and client.crt.urlencoded), not --account`),
      );
    }
    this.#token ??= (async () => {
      let request: unknown;
      try {
        request = JSON.parse(credentials.tokenRequest);
      } catch {
        throw new RemoteError('the token request in the account files is not JSON');
      }
      const answer = await call(this.remote, 'POST', '/api/auth/token', { headers: { 'x-ssl-client-cert': credentials.certificate }, body: request });
      const token = expect("the account's token", answer, [200, 201]).access_token;
      if (typeof token !== 'string') throw new RemoteError("the account's token: the answer holds no access_token");
      return { authorization: `Bearer ${token}`, 'x-ssl-client-cert': credentials.certificate };
    })();
    return this.#token;
  }

  /** A Pix key of the account: --key, else the first of the demo files' keys, else a new EVP key made by the operator. */
  pixKey(): Promise<string> {
    this.#pixKey ??= (async () => {
      if (this.#key) return this.#key;
      const fromFiles = this.#filesKey();
      if (fromFiles) return fromFiles;
      const made = await this.admin('a Pix key for the account', 'POST', `/admin/accounts/${this.remote.accountId}/pix-keys`, { type: 'evp' }, 201);
      return String(made.key);
    })();
    return this.#pixKey;
  }

  #filesKey(): string | undefined {
    try {
      const files = JSON.parse(readFileSync(join(this.#dir, 'credentials.json'), 'utf8')) as { accountId?: unknown; pixKeys?: { key?: unknown }[] };
      if (String(files.accountId) !== String(this.remote.accountId)) return undefined;
      const key = files.pixKeys?.[0]?.key;
      return typeof key === 'string' ? key : undefined;
    } catch {
      return undefined;
    }
  }

  settle(): Promise<Json> {
    return this.admin('settling', 'POST', '/sandbox/settle', undefined, 200);
  }
}

function expect(what: string, answer: Answer, statuses: number[]): Json {
  if (!(statuses.length === 0 ? answer.status >= 200 && answer.status < 300 : statuses.includes(answer.status))) throw answerError(what, answer);
  return typeof answer.body === 'object' && answer.body !== null ? (answer.body as Json) : {};
}

const PAYER = { name: 'Pagador Sandbox', document: '52998224725' };
const brl = (amount: string) => `R$ ${amount}`;
const txidOf = () => `trig${randomBytes(12).toString('hex')}`;
const refundIdOf = () => `trig${randomBytes(8).toString('hex')}`;

/** A PIX from another institution arriving at the account's key. */
async function receive(c: Context, extra: Json = {}, payer: Json = {}): Promise<{ key: string; endToEndId: string; transactionId: number }> {
  const key = await c.pixKey();
  const made = await c.admin('the incoming PIX', 'POST', '/sandbox/pix/incoming', { pixKey: key, amount: c.amount, payer: { ...PAYER, ...payer }, ...extra }, 201);
  return { key, endToEndId: String(made.endToEndId), transactionId: Number(made.transactionId) };
}

/** A charge of the account, created with its own API. */
async function createCob(c: Context): Promise<{ txid: string; key: string }> {
  const key = await c.pixKey();
  const txid = txidOf();
  await c.account('creating the cob', 'PUT', `/cob/${txid}`, { calendario: { expiracao: 3600 }, valor: { original: c.amount }, chave: key }, {}, 201);
  return { txid, key };
}

/** A key at another institution, in the sandbox's directory. */
async function externalKey(c: Context): Promise<string> {
  const key = `trigger-${randomUUID()}@example.com`;
  await c.admin('the receiving key at another institution', 'POST', '/sandbox/dict/keys', { key, name: 'Recebedor Sandbox', document: '11222333000181', ispb: '60746948', bankName: 'Bradesco' }, 201);
  return key;
}

/** A transfer out of the account to `key`, with its own API. */
async function transfer(c: Context, key: string): Promise<{ id: number; endToEndId: string }> {
  const made = await c.account(
    'the transfer',
    'POST',
    '/dict/pix',
    { pixKey: key, payment: { currency: 'BRL', amount: centavosToNumber(parseDecimal(c.amount)!) }, description: 'pix-api trigger' },
    { 'x-idempotency-key': randomUUID() },
    201,
  );
  return { id: Number(made.id), endToEndId: String(made.endToEndId) };
}

async function refund(c: Context, payer: Json): Promise<string[]> {
  const pix = await receive(c, {}, payer);
  const id = refundIdOf();
  const made = await c.account('the refund', 'PUT', `/pix/${pix.endToEndId}/devolucao/${id}`, { valor: c.amount }, {}, 201, 200);
  await c.settle();
  const after = await c.account('reading the refund', 'GET', `/pix/${pix.endToEndId}/devolucao/${id}`, undefined, {}, 200);
  const motivo = typeof after.motivo === 'string' ? ` (${after.motivo})` : '';
  return [
    `pix.received: PIX of ${brl(c.amount)} received at key ${pix.key}, endToEndId ${pix.endToEndId}, transaction ${pix.transactionId}`,
    `refund ${id} of ${brl(c.amount)} of endToEndId ${pix.endToEndId}: ${String(after.status)}${motivo}, rtrId ${String(made.rtrId)}`,
  ];
}

async function openMed(c: Context): Promise<{ lines: string[]; medId: number }> {
  const pix = await receive(c);
  const made = await c.admin('opening the MED', 'POST', '/sandbox/med', { endToEndId: pix.endToEndId, reason: 'FRAUD', details: 'pix-api trigger' }, 201);
  const medId = Number(made.medId);
  return {
    medId,
    lines: [
      `pix.received: PIX of ${brl(c.amount)} received at key ${pix.key}, endToEndId ${pix.endToEndId}, transaction ${pix.transactionId}`,
      `med.opened: MED ${medId} (FRAUD) against endToEndId ${pix.endToEndId}`,
    ],
  };
}

/** `n` days from business time's today, in São Paulo. */
async function businessDay(c: Context, n: number): Promise<string> {
  const clock = await c.admin('reading the test clock', 'GET', '/sandbox/clock', undefined, 200);
  return saoPauloDay(new Date(new Date(String(clock.now)).getTime() + n * 86_400_000));
}

const advance = (c: Context, body: { seconds: number } | { to: string }) => c.admin('moving the test clock', 'POST', '/sandbox/clock/advance', body, 200);

/**
 * A monthly recurrence of `amount` from today, asked of the account by the sandbox's receiver,
 * sent (the test clock 5 s on, so that it arrives now) and approved by the account itself.
 */
async function approvedRecurrence(c: Context, amount: string): Promise<{ idRec: string; lines: string[] }> {
  const made = await c.admin(
    'the recurrence',
    'POST',
    '/sandbox/automatico/recurrences',
    { payerAccountId: Number(c.remote.accountId), contract: `trig-${randomBytes(6).toString('hex')}`, frequency: 'MENSAL', startDate: await businessDay(c, 0), fixedAmount: amount },
    201,
  );
  const idRec = String(made.idRec);
  await advance(c, { seconds: 5 });
  const approved = await c.account('approving the authorization', 'POST', `/api/automatico/authorizations/${idRec}/approve`, {}, {}, 200);
  return {
    idRec,
    lines: [
      `automatico.authorization_requested: recurrence ${idRec} of ${brl(amount)} a month asked of account ${c.remote.accountId}${solicitationOf(made)}`,
      `authorization ${idRec} ${String(approved.status)} by the account (${String(approved.journey)})`,
    ],
  };
}

/** A charge of an approved recurrence due in 5 days, scheduled by the account's bank (the test clock a minute on). */
async function scheduledCharge(c: Context, amount: string): Promise<{ idRec: string; charge: Json; lines: string[] }> {
  const rec = await approvedRecurrence(c, amount);
  const dueDate = await businessDay(c, 5);
  const charge = await c.admin('the recurring charge', 'POST', `/sandbox/automatico/recurrences/${rec.idRec}/charges`, { dueDate, amount, adjustToBusinessDay: false }, 201);
  const moved = await advance(c, { seconds: 61 });
  return {
    idRec: rec.idRec,
    charge,
    lines: [
      ...rec.lines,
      `automatico.charge_scheduled: charge ${String(charge.id)} (txid ${String(charge.txid)}) of ${brl(amount)} due ${dueDate}, recurrence ${rec.idRec}; test clock now ${String(moved.now)}`,
    ],
  };
}

/** The charge's due date at 08:00 in São Paulo: its morning attempt is made by then. */
async function debitMorning(c: Context, charge: Json): Promise<Json> {
  const day = String(charge.settlementDate ?? charge.dueDate);
  return advance(c, { to: new Date(`${day}T08:00:00.000-03:00`).toISOString() });
}

interface EventDefinition {
  readonly description: string;
  run(c: Context): Promise<string[]>;
}

const LATE_DAYS = 7;
const saoPauloDay = (at: Date) => new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Sao_Paulo', year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
const solicitationOf = (made: Json) => {
  const id = (made.solicitation as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? `, solicitation ${id}` : '';
};

export const EVENTS: Readonly<Record<string, EventDefinition>> = {
  'pix.received': {
    description: 'a PIX arrives from another institution at the account\'s key (cash_in)',
    async run(c) {
      const pix = await receive(c);
      return [`pix.received: PIX of ${brl(c.amount)} received at key ${pix.key}, endToEndId ${pix.endToEndId}, transaction ${pix.transactionId}`];
    },
  },
  'pix.received.txid': {
    description: 'a cob is created (account credentials), then a PIX naming its txid pays it (cash_in)',
    async run(c) {
      const cob = await createCob(c);
      const pix = await receive(c, { txid: cob.txid });
      return [`pix.received.txid: PIX of ${brl(c.amount)} received at key ${cob.key} for txid ${cob.txid}, endToEndId ${pix.endToEndId}, transaction ${pix.transactionId}`];
    },
  },
  'cob.paid': {
    description: "a cob is created (account credentials) and the sandbox's payer pays it (cash_in)",
    async run(c) {
      const cob = await createCob(c);
      const paid = await c.admin('paying the cob', 'POST', `/sandbox/cob/${cob.txid}/pay`, { payer: PAYER, accountId: Number(c.remote.accountId) }, 201);
      return [`cob.paid: cob ${cob.txid} of ${brl(c.amount)} paid, endToEndId ${String(paid.endToEndId)}, transaction ${String(paid.transactionId)}`];
    },
  },
  'cobv.paid_late': {
    description:
      'a cobv due today with a fine and interest (account credentials), paid 7 days late (cash_in); MOVES THE TEST CLOCK 7 days on and leaves it there (clock reset after the delivery)',
    async run(c) {
      const key = await c.pixKey();
      const txid = txidOf();
      const clock = await c.admin('reading the test clock', 'GET', '/sandbox/clock', undefined, 200);
      const due = saoPauloDay(new Date(String(clock.now)));
      await c.account(
        'creating the cobv',
        'PUT',
        `/v2/cobv/${txid}`,
        {
          calendario: { dataDeVencimento: due, validadeAposVencimento: 30 },
          devedor: { cpf: PAYER.document, nome: PAYER.name },
          valor: { original: c.amount, multa: { modalidade: 2, valorPerc: '2.00' }, juros: { modalidade: 2, valorPerc: '1.00' } },
          chave: key,
        },
        {},
        201,
      );
      // A due date is never before the charge is made: the payment is late only on a later day of business time.
      const moved = await c.admin('moving the test clock', 'POST', '/sandbox/clock/advance', { seconds: LATE_DAYS * 86_400 }, 200);
      const paid = await c.admin('paying the cobv', 'POST', `/sandbox/cob/${txid}/pay`, { payer: PAYER, accountId: Number(c.remote.accountId) }, 201);
      const after = await c.account('reading the cobv', 'GET', `/v2/cobv/${txid}`, undefined, {}, 200);
      const received = (after.pix as { valor?: unknown }[] | undefined)?.[0]?.valor;
      return [
        `cobv.paid_late: cobv ${txid} of ${brl(c.amount)} due ${due} paid ${LATE_DAYS} days late${typeof received === 'string' ? ` with ${brl(received)}` : ''}, endToEndId ${String(paid.endToEndId)}, transaction ${String(paid.transactionId)}`,
        `the test clock is now ${String(moved.now)} (offset ${String(moved.offsetSeconds)} s); its webhooks are due then: \`pix-api clock reset\` once they are delivered`,
      ];
    },
  },
  'transfer.settled': {
    description: 'a transfer out of the account (account credentials) to a key at another institution, settled (cash_out)',
    async run(c) {
      const key = await externalKey(c);
      const made = await transfer(c, key);
      await c.settle();
      const after = await c.account('reading the transfer', 'GET', `/api/pix/transaction/${made.id}`, undefined, {}, 200);
      return [`transfer.settled: transfer of ${brl(c.amount)} to ${key} ${String(after.status ?? 'settled')}, endToEndId ${made.endToEndId}, transaction ${made.id}`];
    },
  },
  'transfer.rejected': {
    description: 'a transfer out (account credentials) the receiving institution rejects, --reason CODE (default AC03) (cash_out, ERROR)',
    async run(c) {
      const reason = c.reason ?? 'AC03';
      if (!/^[A-Z]{2}\d{2}$/.test(reason)) throw new RemoteError(`--reason must be a BCB reason code such as AC03, AM04, AB03: ${reason}`);
      const key = await externalKey(c);
      const fault = await c.admin('the settlement fault', 'POST', '/sandbox/faults', { kind: 'settlement', effect: 'reject', pixKey: key, reason }, 201);
      try {
        const made = await transfer(c, key);
        await c.settle();
        const after = await c.account('reading the transfer', 'GET', `/api/pix/transaction/${made.id}`, undefined, {}, 200);
        return [
          `transfer.rejected: transfer of ${brl(c.amount)} to ${key} ${String(after.status)} (${String(after.errorReason ?? reason)}), endToEndId ${made.endToEndId}, transaction ${made.id}`,
        ];
      } finally {
        await call(c.remote, 'DELETE', `/sandbox/faults/${String(fault.id)}`, { headers: adminHeaders(c.remote) });
      }
    },
  },
  'refund.received': {
    description: 'a transfer out (account credentials) is settled, then its receiver sends money back (cash_out, then refund_out)',
    async run(c) {
      const key = await externalKey(c);
      const made = await transfer(c, key);
      await c.settle();
      const back = await c.admin('the incoming refund', 'POST', '/sandbox/refunds/incoming', { endToEndId: made.endToEndId, amount: c.amount }, 201);
      await c.settle();
      return [
        `transfer.settled: transfer of ${brl(c.amount)} to ${key}, endToEndId ${made.endToEndId}, transaction ${made.id}`,
        `refund.received: ${brl(c.amount)} sent back for endToEndId ${made.endToEndId}${back.endToEndId ? `, endToEndId ${String(back.endToEndId)}` : ''}${back.transactionId ? `, transaction ${String(back.transactionId)}` : ''}`,
      ];
    },
  },
  'refund.devolvido': {
    description: 'a PIX arrives, the account refunds it (account credentials), settled DEVOLVIDO (cash_in, then refund_in)',
    run: (c) => refund(c, {}),
  },
  'refund.nao_realizado': {
    description: "a PIX arrives from a payer whose institution refuses refunds; the account's refund ends NAO_REALIZADO (cash_in, then refund_in)",
    run: (c) => refund(c, { behavior: 'reject' }),
  },
  'med.opened': {
    description: 'a PIX arrives and a MED (FRAUD) is opened against it (cash_in, then med_created)',
    async run(c) {
      return (await openMed(c)).lines;
    },
  },
  'med.accepted': {
    description: 'a PIX arrives, a MED is opened against it and accepted; its refund settled (cash_in, med_created, med_accepted, refund_in)',
    async run(c) {
      const med = await openMed(c);
      await c.admin('accepting the MED', 'POST', `/sandbox/med/${med.medId}/accept`, undefined, 200);
      await c.settle();
      return [...med.lines, `med.accepted: MED ${med.medId} accepted, its refund MED-${med.medId} settled`];
    },
  },
  'med.rejected': {
    description: 'a PIX arrives, a MED is opened against it and rejected (cash_in, med_created, med_rejected)',
    async run(c) {
      const med = await openMed(c);
      await c.admin('rejecting the MED', 'POST', `/sandbox/med/${med.medId}/reject`, undefined, 200);
      return [...med.lines, `med.rejected: MED ${med.medId} rejected, the money released`];
    },
  },
  'automatico.authorization_requested': {
    description: "another institution's receiver asks the account to approve a monthly recurrence of Pix Automático (authorization_requested, sent by the worker a moment later)",
    async run(c) {
      const clock = await c.admin('reading the test clock', 'GET', '/sandbox/clock', undefined, 200);
      const start = new Date(new Date(String(clock.now)).getTime() + 30 * 86_400_000);
      const made = await c.admin(
        'the recurrence',
        'POST',
        '/sandbox/automatico/recurrences',
        { payerAccountId: Number(c.remote.accountId), contract: `trig-${randomBytes(6).toString('hex')}`, frequency: 'MENSAL', startDate: saoPauloDay(start), fixedAmount: c.amount },
        201,
      );
      return [
        `automatico.authorization_requested: recurrence ${String(made.idRec)} of ${brl(c.amount)} a month asked of account ${c.remote.accountId}${solicitationOf(made)}`,
      ];
    },
  },
  'automatico.charge_scheduled': {
    description:
      'a recurrence asked and approved (account credentials), then a charge due in 5 days, scheduled (authorization_requested, recurring_charge_scheduled); MOVES THE TEST CLOCK about a minute on',
    async run(c) {
      return (await scheduledCharge(c, c.amount)).lines;
    },
  },
  'automatico.charge_paid': {
    description: 'automatico.charge_scheduled, then debited on its due morning (recurring_charge_paid, cash_out); MOVES THE TEST CLOCK 5 days on',
    async run(c) {
      const scheduled = await scheduledCharge(c, c.amount);
      const moved = await debitMorning(c, scheduled.charge);
      const after = await c.account('reading the recurring charge', 'GET', `/api/automatico/charges/${String(scheduled.charge.id)}`, undefined, {}, 200);
      return [
        ...scheduled.lines,
        `automatico.charge_paid: charge ${String(scheduled.charge.id)} ${String(after.status)}, endToEndId ${String(after.endToEndId)}, transaction ${String(after.transactionId)}; test clock now ${String(moved.now)}`,
      ];
    },
  },
  'automatico.charge_failed': {
    description:
      "automatico.charge_scheduled for more than the account's available balance, its morning attempt failing AM04 (recurring_charge_failed); MOVES THE TEST CLOCK 5 days on",
    async run(c) {
      const balances = await c.account('reading the balance', 'GET', '/accounts/balances', undefined, {}, 200);
      const available = (balances.data as { balanceAmount?: { available?: unknown } }[] | undefined)?.[0]?.balanceAmount?.available;
      const centavos = typeof available === 'number' ? numberToCentavos(available) : null;
      if (centavos === null) throw new RemoteError("reading the balance: the answer holds no available amount");
      const amount = formatCentavos((centavos > 0n ? centavos : 0n) + 100_00n);
      const scheduled = await scheduledCharge(c, amount);
      const moved = await debitMorning(c, scheduled.charge);
      const after = await c.account('reading the recurring charge', 'GET', `/api/automatico/charges/${String(scheduled.charge.id)}`, undefined, {}, 200);
      return [
        ...scheduled.lines,
        `automatico.charge_failed: charge ${String(scheduled.charge.id)} of ${brl(amount)} (more than the ${brl(formatCentavos(centavos))} available) ${String(after.status)}; test clock now ${String(moved.now)}`,
      ];
    },
  },
};

const USAGE = `usage: pix-api trigger EVENT [options]
       pix-api trigger --list

Makes EVENT happen for the account in a running sandbox, as the Pix network would.
  --list               the events, each with what it does
  --amount AMOUNT      the amount, "12.34" (default 10.00)
  --key KEY            the account's Pix key money arrives at (default: the demo files' key, else a new EVP key)
  --reason CODE        transfer.rejected: BCB's reason code (default AC03)
${REMOTE_USAGE}`;

function listing(): string {
  const width = Math.max(...Object.keys(EVENTS).map((name) => name.length));
  return Object.entries(EVENTS)
    .map(([name, event]) => `${name.padEnd(width)}  ${event.description}`)
    .join('\n');
}

export async function runTrigger(args: string[], out: (line: string) => void = (line) => console.log(line)): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new RemoteError(`trigger: ${(error as Error).message} (pix-api trigger --help)`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    out(USAGE);
    return;
  }
  if (values.list) {
    out(listing());
    return;
  }
  if (positionals.length !== 1) throw new RemoteError('trigger takes one event (pix-api trigger --list names them)');
  const name = positionals[0]!;
  const event = Object.hasOwn(EVENTS, name) ? EVENTS[name] : undefined;
  if (!event) throw new RemoteError(`unknown event "${name}" (pix-api trigger --list names them)`);
  const centavos = parseDecimal(values.amount ?? '10.00');
  if (centavos === null || centavos <= 0n) throw new RemoteError(`--amount must be a positive amount such as 12.34: ${values.amount}`);
  const remote = remoteFrom(values);
  const context = new Context(remote, { amount: formatCentavos(centavos), reason: values.reason, key: values.key, dir: values.dir ?? join('data', 'current') });
  for (const line of await event.run(context)) out(line);
}
