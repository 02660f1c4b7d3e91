/**
 * The rest of the Pix network, as Pix Automático's rules need it to act on its own, on the test
 * clock: solicitations sent, received and answered; recurring charges answered by the payer's
 * PSP, settled in the morning's slot and retried in the evening's; attempts resent after an
 * operational failure; charges that expire with no attempt left. Every row the network moves
 * says when it moves next (`next_step_at`); `runDue` takes what fell due, oldest first across the
 * three tables, each step acting at its own moment (the history says when it happened, however
 * far the clock jumped), in batches that lock their rows (several processes never take one step
 * twice). `nextEvent` says the next moment a rule acts. Decision:
 * docs/decisions/0048-pix-automatico-cycle.md.
 */
import { sql } from 'kysely';
import type { Db, Trx } from '../../db/client.ts';
import type { Config } from '../../config.ts';
import type { Clock } from '../../lib/clock.ts';
import type { SandboxControls } from '../controls/service.ts';
import { formatCentavos } from '../../lib/money.ts';
import { saoPauloDay } from '../cobv/due.ts';
import { CHARGE_REJECTIONS, INSUFFICIENT_FUNDS, INSUFFICIENT_FUNDS_DESCRIPTION, WHOLE_CHARGE_REJECTIONS, type ChargeRejection } from './catalog.ts';
import { recurringChargeCallback } from './callbacks.ts';
import { newAttempt } from './charges.ts';
import { ANSWER_WITHIN_MS, cycleOf, cycleStart, endOf, lastAttemptDay, MAX_RETRIES, RETRY_SLOT, retryAt, saoPauloHour, sendingWindow, settlementAt, settlementDate, type WindowDays } from './cycle.ts';
import { appended, approveRecurrence, expireRecurrence, rejectRecurrence } from './lifecycle.ts';
import { answerCharge, sandboxSolicitationAnswer, settleAttempt, type AutomaticoFaults, type SolicitationAnswer } from './payer-psp.ts';
import { notFound, unprocessable } from '../../http/errors.ts';
import { notifyAuthorization, notifyPayerCharge } from './payer-events.ts';
import type { PayerFailure } from './payer-views.ts';
import { selectRecurrences, selectRecurringCharges, type AttemptRow, type RecurrenceRow, type RecurringChargeRow, type SolicitationRow } from './rows.ts';

export interface NetworkDeps {
  readonly db: Db;
  readonly clock: Clock;
  /** This institution's ISPB. */
  readonly ispb: string;
  readonly windowDays: WindowDays;
  /** The sandbox's Pix Automático faults (none in production). */
  readonly faults?: AutomaticoFaults | undefined;
  readonly log?: { error(object: unknown, message: string): void } | undefined;
}

/**
 * What the network's steps need, from the service's configuration: the API's advance of the test
 * clock runs them, and so does every worker. The sandbox's controls give its faults.
 */
export function networkDeps(
  deps: { config: Pick<Config, 'pspIspb' | 'automaticoWindowDays'>; db: Db; clock: Clock; controls?: Pick<SandboxControls, 'automaticoFault'> | undefined },
  log?: NetworkDeps['log'],
): NetworkDeps {
  const { controls } = deps;
  return {
    db: deps.db,
    clock: deps.clock,
    ispb: deps.config.pspIspb,
    windowDays: deps.config.automaticoWindowDays,
    ...(controls ? { faults: { take: (stage, trx) => controls.automaticoFault(stage, trx) } } : {}),
    ...(log ? { log } : {}),
  };
}

/** The payer's PSP has a solicitation this long after it is sent (ENVIADA, then RECEIVED). */
export const RECEIVE_AFTER_MS = 1_000;
/** The sandbox's payer answers a solicitation it received this long after (by default, it approves). */
export const SANDBOX_PAYER_DECIDES_AFTER_MS = 60_000;
/** Steps taken in one transaction at most. */
const BATCH = 100;
/** A step that failed is tried again this much later (and logged). */
const FAILED_STEP_RETRY_MS = 300_000;

type Table = 'rec_solicitations' | 'recurring_charge_attempts' | 'recurring_charges';
const TABLES: readonly Table[] = ['rec_solicitations', 'recurring_charge_attempts', 'recurring_charges'];

/** When each table's first step falls due (null: none is pending). */
async function heads(db: Db | Trx): Promise<Map<Table, Date | null>> {
  const { rows } = await sql<{ t: Table; at: Date | null }>`
    select 'rec_solicitations' as t, (select min(next_step_at) from rec_solicitations where next_step_at is not null) as at
    union all select 'recurring_charge_attempts', (select min(next_step_at) from recurring_charge_attempts where next_step_at is not null)
    union all select 'recurring_charges', (select min(next_step_at) from recurring_charges where next_step_at is not null)`.execute(db);
  return new Map(rows.map((r) => [r.t, r.at === null ? null : new Date(r.at)]));
}

/**
 * Takes every step due by `until`, in order of when each falls due; returns how many. Steps that
 * another process holds are left to it. A step that fails is logged and tried again later; the
 * others go on.
 */
export async function runDue(deps: NetworkDeps, until: Date = deps.clock.now(), max = 1_000_000): Promise<number> {
  let done = 0;
  let contended = 0;
  while (done < max) {
    const due = await heads(deps.db);
    let table: Table | undefined;
    let first: Date | undefined;
    for (const t of TABLES) {
      const at = due.get(t);
      if (at && at.getTime() <= until.getTime() && (first === undefined || at.getTime() < first.getTime())) {
        first = at;
        table = t;
      }
    }
    if (!table || !first) return done;
    // This table's steps up to the next one of another table: the order holds across them.
    let bound = until;
    for (const t of TABLES) {
      const at = due.get(t);
      if (t !== table && at && at.getTime() < bound.getTime()) bound = at;
    }
    const took = await runBatch(deps, table, bound, until);
    if (took === 0) {
      // Another process holds them: wait for it a little, then leave the rest to it.
      if (++contended > 50) return done;
      await new Promise((resolve) => setTimeout(resolve, 20));
      continue;
    }
    contended = 0;
    done += took;
  }
  return done;
}

/**
 * One transaction of steps of one table due by `bound`. A batch that fails is taken again one
 * step at a time: a step that fails alone is logged and put off until after `until`, so that the
 * others go on.
 */
async function runBatch(deps: NetworkDeps, table: Table, bound: Date, until: Date): Promise<number> {
  try {
    return await deps.db.transaction().execute(async (trx) => {
      const rows = await lockDue(trx, table, bound, BATCH);
      for (const row of rows) await step(trx, deps, table, row.id, row.next_step_at);
      return rows.length;
    });
  } catch (error) {
    deps.log?.error({ err: error, table }, 'Pix Automático steps failed together; taking them one at a time');
  }
  let took = 0;
  for (; took < BATCH; took++) {
    let taken: { id: bigint; next_step_at: Date } | undefined;
    try {
      await deps.db.transaction().execute(async (trx) => {
        [taken] = await lockDue(trx, table, bound, 1);
        if (taken) await step(trx, deps, table, taken.id, taken.next_step_at);
      });
    } catch (error) {
      if (!taken) throw error;
      deps.log?.error({ err: error, table, id: taken.id.toString() }, 'Pix Automático step failed; it is tried again later');
      const later = new Date(Math.max(taken.next_step_at.getTime(), until.getTime()) + FAILED_STEP_RETRY_MS);
      await deps.db.updateTable(table).set({ next_step_at: later }).where('id', '=', taken.id).execute();
    }
    if (!taken) break;
  }
  return took;
}

async function lockDue(trx: Trx, table: Table, bound: Date, limit: number): Promise<{ id: bigint; next_step_at: Date }[]> {
  const { rows } = await sql<{ id: bigint; next_step_at: Date }>`
    select id, next_step_at from ${sql.table(table)}
     where next_step_at is not null and next_step_at <= ${bound}::timestamptz
     order by next_step_at, id limit ${limit} for update skip locked`.execute(trx);
  return rows.map((r) => ({ id: BigInt(r.id), next_step_at: new Date(r.next_step_at) }));
}

function step(trx: Trx, deps: NetworkDeps, table: Table, id: bigint, at: Date): Promise<void> {
  if (table === 'rec_solicitations') return solicitationStep(trx, deps, id, at);
  if (table === 'recurring_charge_attempts') return attemptStep(trx, deps, id, at);
  return chargeStep(trx, id, at);
}

// ---- Solicitations -----------------------------------------------------------------------

async function moveSolicitation(trx: Trx, s: SolicitationRow, status: SolicitationRow['status'] | null, next: Date | null, at: Date): Promise<void> {
  await trx
    .updateTable('rec_solicitations')
    .set({ ...(status === null ? {} : { status, history: appended(status, at) }), next_step_at: next, updated_at: at })
    .where('id', '=', s.id)
    .execute();
}

async function solicitationStep(trx: Trx, deps: NetworkDeps, id: bigint, at: Date): Promise<void> {
  const s = await trx.selectFrom('rec_solicitations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const rec = await selectRecurrences(trx).where('recurrences.id', '=', s.recurrence_id).executeTakeFirstOrThrow();
  const open = s.status === 'CRIADA' || s.status === 'ENVIADA' || s.status === 'RECEBIDA';
  if (!open || rec.status !== 'CRIADA') return moveSolicitation(trx, s, open ? 'CANCELADA' : null, null, at);
  if (s.expires_at.getTime() <= at.getTime()) {
    await moveSolicitation(trx, s, 'EXPIRADA', null, at);
    await expireRecurrence(trx, rec, at);
    return;
  }
  const until = (ms: number) => new Date(Math.min(at.getTime() + ms, s.expires_at.getTime()));
  const ours = s.destinatario.ispbParticipante === deps.ispb;
  if (s.status === 'CRIADA') return moveSolicitation(trx, s, 'ENVIADA', until(RECEIVE_AFTER_MS), at);
  // Received: at this institution it waits for its account holder until it expires; the
  // sandbox's payer answers a minute later.
  if (s.status === 'ENVIADA' && ours) return receiveSolicitation(trx, s, rec, at);
  if (s.status === 'ENVIADA') return moveSolicitation(trx, s, 'RECEBIDA', until(SANDBOX_PAYER_DECIDES_AFTER_MS), at);
  if (ours) return moveSolicitation(trx, s, null, s.expires_at, at);
  await answerSolicitation(trx, s, rec, await sandboxSolicitationAnswer(trx, deps), at);
}

/**
 * A solicitation reaches an account holder of this service: it waits for the holder's answer
 * until it expires, the recurrence names its payer here, and the holder is told.
 */
async function receiveSolicitation(trx: Trx, s: SolicitationRow, rec: RecurrenceRow, at: Date): Promise<void> {
  if (s.payer_account_id === null) {
    // No account of this institution matched (a solicitation made before its payer was known).
    await moveSolicitation(trx, s, 'REJEITADA', null, at);
    await rejectRecurrence(trx, rec, 'AP13', at);
    return;
  }
  await moveSolicitation(trx, s, 'RECEBIDA', s.expires_at, at);
  await trx.updateTable('recurrences').set({ payer_account_id: s.payer_account_id, updated_at: at }).where('id', '=', rec.id).execute();
  const asked = await selectRecurrences(trx).where('recurrences.id', '=', rec.id).executeTakeFirstOrThrow();
  await notifyAuthorization(trx, asked, at, true);
}

/** The payer's answer to a solicitation it received: ACEITA, the recurrence APROVADA by JORNADA_1; or REJEITADA with it. */
export async function answerSolicitation(trx: Trx, s: SolicitationRow, rec: RecurrenceRow, answer: SolicitationAnswer, at: Date): Promise<void> {
  if ('reject' in answer) {
    await moveSolicitation(trx, s, 'REJEITADA', null, at);
    await rejectRecurrence(trx, rec, answer.reject, at);
    return;
  }
  await moveSolicitation(trx, s, 'ACEITA', null, at);
  const { cpf, cnpj, ispbParticipante } = s.destinatario;
  await approveRecurrence(
    trx,
    rec,
    { jornada: 'JORNADA_1', pagador: { cpf, cnpj, ispbParticipante: ispbParticipante! }, payerAccountId: s.payer_account_id, maximoCentavos: answer.maximoCentavos ?? null },
    at,
  );
}

/**
 * The sandbox's payer answers a solicitation now, rather than a minute after receiving it (the
 * console's and the sandbox API's "accept" and "reject"): only one RECEIVED by the sandbox's
 * payer PSP, not one of this institution's account holders.
 */
export async function answerSolicitationNow(deps: Pick<NetworkDeps, 'db' | 'clock' | 'ispb'>, idSolicRec: string, answer: SolicitationAnswer): Promise<SolicitationRow> {
  const at = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const s = await trx.selectFrom('rec_solicitations').selectAll().where('id_solic_rec', '=', idSolicRec).forUpdate().executeTakeFirst();
    if (!s) throw notFound('SOLICITATION_NOT_FOUND', `No solicitation ${idSolicRec}`);
    if (s.destinatario.ispbParticipante === deps.ispb) {
      throw unprocessable('SOLICITATION_NOT_ANSWERABLE', `The solicitation ${idSolicRec} went to an account holder of this institution, who answers it from their own account`);
    }
    if (s.status !== 'RECEBIDA') throw unprocessable('SOLICITATION_NOT_ANSWERABLE', `The solicitation ${idSolicRec} is ${s.status}: the payer answers one RECEBIDA`);
    const rec = await selectRecurrences(trx).where('recurrences.id', '=', s.recurrence_id).executeTakeFirstOrThrow();
    await answerSolicitation(trx, s, rec, answer, at);
    return trx.selectFrom('rec_solicitations').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
  });
}

// ---- Recurring charges and their attempts --------------------------------------------------

async function moveAttempt(
  trx: Trx,
  a: AttemptRow,
  change: { status?: AttemptRow['status']; step: AttemptRow['step']; next: Date | null; rejeicao?: ChargeRejection; debit?: bigint | null },
  at: Date,
): Promise<void> {
  await trx
    .updateTable('recurring_charge_attempts')
    .set({
      ...(change.status === undefined ? {} : { status: change.status, history: appended(change.status, at) }),
      ...(change.rejeicao === undefined ? {} : { rejeicao: JSON.stringify({ codigo: change.rejeicao, descricao: CHARGE_REJECTIONS[change.rejeicao] }) }),
      ...(change.debit === undefined ? {} : { debit_transaction_id: change.debit }),
      step: change.step,
      next_step_at: change.next,
      updated_at: at,
    })
    .where('id', '=', a.id)
    .execute();
}

async function moveCharge(trx: Trx, c: RecurringChargeRow, change: { status?: RecurringChargeRow['status']; next?: Date | null; encerramento?: unknown; paid?: bigint | null }, at: Date): Promise<void> {
  await trx
    .updateTable('recurring_charges')
    .set({
      ...(change.status === undefined ? {} : { status: change.status, history: appended(change.status, at) }),
      ...(change.next === undefined ? {} : { next_step_at: change.next }),
      ...(change.encerramento === undefined ? {} : { encerramento: JSON.stringify(change.encerramento) }),
      ...(change.paid === undefined ? {} : { paid_transaction_id: change.paid }),
      updated_at: at,
    })
    .where('id', '=', c.id)
    .execute();
}

/**
 * An attempt that ended without paying: a refusal that ends the whole charge rejects it; else the
 * charge expires at once when no other attempt can come (no retries, 3 used, or past its last
 * day), and otherwise waits for the receiver's retry until its last day ends.
 */
async function afterFailedAttempt(trx: Trx, c: RecurringChargeRow, code: ChargeRejection | null, at: Date): Promise<void> {
  if (code !== null && WHOLE_CHARGE_REJECTIONS.has(code)) {
    await moveCharge(trx, c, { status: 'REJEITADA', next: null, encerramento: { rejeicao: { codigo: code, descricao: CHARGE_REJECTIONS[code] } } }, at);
    return;
  }
  const retries = c.politica_retentativa === 'PERMITE_3R_7D';
  const used = await trx.selectFrom('recurring_charge_attempts').select((eb) => eb.fn.countAll<bigint>().as('n')).where('charge_id', '=', c.id).where('tipo', '=', 'NTAG').executeTakeFirstOrThrow();
  const lastEnds = endOf(lastAttemptDay(c, retries));
  // A retry takes a future date: none is left once the last day has begun.
  const noneLeft = !retries || Number(used.n) >= MAX_RETRIES || saoPauloDay(at) >= lastAttemptDay(c, retries);
  await moveCharge(trx, c, { next: noneLeft ? at : lastEnds }, at);
}

/** The payer's failure of an attempt, as its notification tells it. */
const failure = (code: ChargeRejection | typeof INSUFFICIENT_FUNDS, retry: Date | null): PayerFailure => ({
  code,
  description: code === INSUFFICIENT_FUNDS ? INSUFFICIENT_FUNDS_DESCRIPTION : CHARGE_REJECTIONS[code],
  retryAt: retry?.toISOString() ?? null,
});

async function attemptStep(trx: Trx, deps: NetworkDeps, id: bigint, at: Date): Promise<void> {
  const a = await trx.selectFrom('recurring_charge_attempts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const c = await selectRecurringCharges(trx).where('recurring_charges.id', '=', a.charge_id).forUpdate('recurring_charges').executeTakeFirstOrThrow();
  if (c.status === 'CONCLUIDA' || c.status === 'REJEITADA' || c.status === 'CANCELADA' || c.status === 'EXPIRADA') {
    return moveAttempt(trx, a, { step: null, next: null }, at);
  }
  const rec = await selectRecurrences(trx).where('recurrences.id', '=', c.recurrence_id).executeTakeFirstOrThrow();
  const payer = { ispb: deps.ispb, faults: deps.faults };
  if (a.step === 'answer') {
    const answer = await answerCharge(trx, payer, rec, c);
    if ('late' in answer) return moveAttempt(trx, a, { step: 'answer_overdue', next: new Date(a.created_at.getTime() + ANSWER_WITHIN_MS) }, at);
    if ('reject' in answer) {
      await moveAttempt(trx, a, { status: 'REJEITADA', step: null, next: null, rejeicao: answer.reject }, at);
      await afterFailedAttempt(trx, c, answer.reject, at);
      await notifyPayerCharge(trx, c.id, 'recurring_charge_failed', at, failure(answer.reject, null));
    } else {
      const slot = settlementAt(a.data_liquidacao);
      // A resend after an operational failure settles the same day, as soon as it is scheduled.
      await moveAttempt(trx, a, { status: 'AGENDADA', step: 'settle', next: slot.getTime() > at.getTime() ? slot : at }, at);
      if (c.status === 'CRIADA') await moveCharge(trx, c, { status: 'ATIVA' }, at);
      await notifyPayerCharge(trx, c.id, 'recurring_charge_scheduled', at);
    }
    return recurringChargeCallback(trx, c.id, at);
  }
  if (a.step === 'answer_overdue') {
    // The payer's PSP never answered within its 2 hours: the instruction lapses.
    await moveAttempt(trx, a, { status: 'EXPIRADA', step: null, next: null }, at);
    await afterFailedAttempt(trx, c, null, at);
    return recurringChargeCallback(trx, c.id, at);
  }
  const outcome = await settleAttempt(trx, payer, { rec, charge: c, attempt: a }, at);
  if ('paid' in outcome) {
    await moveAttempt(trx, a, { status: 'PAGA', step: null, next: null, debit: outcome.paid.debitTransactionId }, at);
    await moveCharge(trx, c, { status: 'CONCLUIDA', next: null, paid: outcome.paid.transactionId }, at);
    await notifyPayerCharge(trx, c.id, 'recurring_charge_paid', at);
    return recurringChargeCallback(trx, c.id, at);
  }
  if ('insufficient' in outcome) {
    // No funds in the morning: once more in the evening (18:00 to 21:00), the same attempt.
    const evening = retryAt(a.data_liquidacao);
    const closes = saoPauloHour(a.data_liquidacao, RETRY_SLOT.to);
    if (a.step === 'settle' && at.getTime() < closes.getTime()) {
      const next = evening.getTime() > at.getTime() ? evening : at;
      await moveAttempt(trx, a, { step: 'retry', next }, at);
      return notifyPayerCharge(trx, c.id, 'recurring_charge_failed', at, failure(INSUFFICIENT_FUNDS, next));
    }
    await moveAttempt(trx, a, { status: 'EXPIRADA', step: null, next: null }, at);
    await afterFailedAttempt(trx, c, null, at);
    await notifyPayerCharge(trx, c.id, 'recurring_charge_failed', at, failure(INSUFFICIENT_FUNDS, null));
    return recurringChargeCallback(trx, c.id, at);
  }
  await moveAttempt(trx, a, { status: 'REJEITADA', step: null, next: null, rejeicao: outcome.reject }, at);
  if (outcome.reject === 'AB10' && at.getTime() < saoPauloHour(a.data_liquidacao, RETRY_SLOT.to).getTime()) {
    // An error at the payer's PSP interrupted the settlement: the receiver's PSP sends the
    // instruction again the same day (RIFL, IN BCB 513/2024 art. 5 §4 as amended by IN 614/2025).
    const count = await trx.selectFrom('recurring_charge_attempts').select((eb) => eb.fn.countAll<bigint>().as('n')).where('charge_id', '=', c.id).executeTakeFirstOrThrow();
    await trx.insertInto('recurring_charge_attempts').values(newAttempt(c, rec, { position: Number(count.n) + 1, tipo: 'RIFL', day: a.data_liquidacao }, at)).execute();
  } else {
    await afterFailedAttempt(trx, c, outcome.reject, at);
  }
  await notifyPayerCharge(trx, c.id, 'recurring_charge_failed', at, failure(outcome.reject, null));
  return recurringChargeCallback(trx, c.id, at);
}

/** A charge's own step: it expires when no attempt paid it and none is under way (else it looks again in an hour). */
async function chargeStep(trx: Trx, id: bigint, at: Date): Promise<void> {
  const c = await selectRecurringCharges(trx).where('recurring_charges.id', '=', id).executeTakeFirstOrThrow();
  if (c.status !== 'CRIADA' && c.status !== 'ATIVA') return moveCharge(trx, c, { next: null }, at);
  const open = await trx.selectFrom('recurring_charge_attempts').select('id').where('charge_id', '=', id).where('status', 'in', ['SOLICITADA', 'AGENDADA']).executeTakeFirst();
  if (open) return moveCharge(trx, c, { next: new Date(at.getTime() + 3_600_000) }, at);
  await moveCharge(trx, c, { status: 'EXPIRADA', next: null }, at);
  await recurringChargeCallback(trx, c.id, at);
}

// ---- The next event ------------------------------------------------------------------------

export interface NextEvent {
  at: Date;
  kind: string;
  description: string;
}

/** What the next step of a row does, said for the developer who moved the clock to it. */
async function describeHead(db: Db, table: Table, deps: Pick<NetworkDeps, 'ispb'>): Promise<NextEvent | null> {
  if (table === 'rec_solicitations') {
    const s = await db.selectFrom('rec_solicitations').selectAll().where('next_step_at', 'is not', null).orderBy('next_step_at').orderBy('id').limit(1).executeTakeFirst();
    if (!s) return null;
    const at = s.next_step_at!;
    if (s.expires_at.getTime() <= at.getTime()) return { at, kind: 'solicitation-expiry', description: `The solicitation ${s.id_solic_rec} expires unanswered` };
    if (s.status === 'CRIADA') return { at, kind: 'solicitation-sent', description: `The receiver's PSP sends the solicitation ${s.id_solic_rec} to the payer's PSP` };
    if (s.status === 'ENVIADA') return { at, kind: 'solicitation-received', description: `The payer's PSP receives the solicitation ${s.id_solic_rec}` };
    if (s.destinatario.ispbParticipante === deps.ispb) return { at, kind: 'solicitation-expiry', description: `The solicitation ${s.id_solic_rec} expires unanswered` };
    return { at, kind: 'solicitation-answered', description: `The payer answers the solicitation ${s.id_solic_rec} (the sandbox's payer approves it unless a fault refuses it)` };
  }
  if (table === 'recurring_charge_attempts') {
    const a = await db
      .selectFrom('recurring_charge_attempts')
      .innerJoin('recurring_charges', 'recurring_charges.id', 'recurring_charge_attempts.charge_id')
      .select(['recurring_charge_attempts.step', 'recurring_charge_attempts.next_step_at', 'recurring_charge_attempts.data_liquidacao', 'recurring_charge_attempts.tipo', 'recurring_charges.txid', 'recurring_charges.amount_centavos'])
      .where('recurring_charge_attempts.next_step_at', 'is not', null)
      .orderBy('recurring_charge_attempts.next_step_at')
      .orderBy('recurring_charge_attempts.id')
      .limit(1)
      .executeTakeFirst();
    if (!a) return null;
    const at = a.next_step_at!;
    const what = `the recurring charge ${a.txid} (${formatCentavos(a.amount_centavos)}, attempt ${a.tipo} of ${a.data_liquidacao})`;
    if (a.step === 'answer') return { at, kind: 'charge-answered', description: `The payer's PSP answers ${what}: it schedules or refuses it` };
    if (a.step === 'answer_overdue') return { at, kind: 'charge-answer-overdue', description: `The 2 hours the payer's PSP has to answer ${what} run out` };
    if (a.step === 'settle') return { at, kind: 'settlement-slot', description: `The payer's PSP settles ${what} in the morning's slot (00:00 to 08:00)` };
    return { at, kind: 'intraday-retry', description: `The payer's PSP tries ${what} again in the evening's slot (18:00 to 21:00)` };
  }
  const c = await db.selectFrom('recurring_charges').select(['txid', 'next_step_at']).where('next_step_at', 'is not', null).orderBy('next_step_at').orderBy('id').limit(1).executeTakeFirst();
  return c ? { at: c.next_step_at!, kind: 'charge-expiry', description: `The recurring charge ${c.txid} expires unless an attempt is under way` } : null;
}

/**
 * The day a window opens for the next cycle without a charge of each approved recurrence, after
 * `now`: the first moment a receiver may send that cycle's charge (its natural due date, the
 * cycle's first day, moved by ajusteDiaUtil). Recurrences past their last day have none.
 */
async function nextWindow(db: Db, now: Date, days: WindowDays): Promise<NextEvent | null> {
  const recs = await db
    .selectFrom('recurrences')
    .select(['id', 'id_rec', 'data_inicial', 'data_final', 'periodicidade'])
    .where('status', '=', 'APROVADA')
    .orderBy('id')
    .limit(1000)
    .execute();
  if (recs.length === 0) return null;
  const charged = await db
    .selectFrom('recurring_charges')
    .select(['recurrence_id', 'cycle'])
    .where('recurrence_id', 'in', recs.map((r) => r.id))
    .where('status', 'not in', ['REJEITADA', 'CANCELADA'])
    .execute();
  const today = saoPauloDay(now);
  let best: NextEvent | null = null;
  for (const rec of recs) {
    const taken = new Set(charged.filter((c) => c.recurrence_id === rec.id).map((c) => c.cycle));
    let n = Math.max(0, cycleOf(rec.data_inicial, rec.periodicidade, today) ?? 0);
    for (let tries = 0; tries < 60; tries++, n++) {
      const due = cycleStart(rec.data_inicial, rec.periodicidade, n);
      if (rec.data_final !== null && due > rec.data_final) break;
      if (taken.has(n)) continue;
      const opens = saoPauloHour(sendingWindow(settlementDate(due, true), days).opens, 0);
      if (opens.getTime() <= now.getTime()) continue;
      if (!best || opens.getTime() < best.at.getTime()) {
        best = { at: opens, kind: 'window-opens', description: `The window to send the charge of ${rec.id_rec}'s cycle due ${due} opens (D-10)` };
      }
      break;
    }
  }
  return best;
}

/** Immediate and due-date charges that stop being payable after `now`: the first of them. */
async function nextChargeExpiry(db: Db, now: Date): Promise<NextEvent | null> {
  const { rows } = await sql<{ txid: string; at: Date; tipo_cob: string }>`
    select txid, tipo_cob, at from (
      select txid, tipo_cob, created_at + make_interval(secs => expiracao_seconds) as at from charges
       where status = 'ATIVA' and tipo_cob = 'cob' and expiracao_seconds is not null
      union all
      select txid, tipo_cob, (last_payable_day + 1)::timestamp at time zone 'America/Sao_Paulo' as at from charges
       where status = 'ATIVA' and tipo_cob = 'cobv' and last_payable_day is not null) c
     where at > ${now}::timestamptz order by at limit 1`.execute(db);
  const row = rows[0];
  if (!row) return null;
  return { at: new Date(row.at), kind: `${row.tipo_cob}-expiry`, description: `The ${row.tipo_cob} ${row.txid} stops being payable` };
}

/** The next moment after `now` at which a rule of the service acts, and what it does; null when none is pending. */
export async function nextEvent(deps: Pick<NetworkDeps, 'db' | 'ispb' | 'windowDays'>, now: Date): Promise<NextEvent | null> {
  const due = await heads(deps.db);
  const candidates: NextEvent[] = [];
  for (const table of TABLES) {
    if (due.get(table)) {
      const head = await describeHead(deps.db, table, deps);
      if (head) candidates.push(head);
    }
  }
  const [window, expiry] = await Promise.all([nextWindow(deps.db, now, deps.windowDays), nextChargeExpiry(deps.db, now)]);
  if (window) candidates.push(window);
  if (expiry) candidates.push(expiry);
  candidates.sort((x, y) => x.at.getTime() - y.at.getTime());
  return candidates[0] ?? null;
}

