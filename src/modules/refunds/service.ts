import type { Db, Trx } from '../../db/client.ts';
import type { RefundNature } from '../../db/schema.ts';
import { AppError, badRequest, conflict, notFound } from '../../http/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { DAY_MS } from '../../lib/dates.ts';
import { pixIdentifier } from '../../lib/ids.ts';
import { formatCentavos, MAX_AMOUNT_CENTAVOS, parseDecimal2 } from '../../lib/money.ts';
import { holderLedgerAccountIds, post } from '../ledger/service.ts';
import { checkNatureLimit } from './natures.ts';
import * as repo from './repo.ts';
import { refundView } from './views.ts';

export interface RefundsDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly ispb: string;
  /** Wakes this process's settlement worker: a refund settles at once. */
  readonly onHighPriority?: () => void;
}

/**
 * How long after the original PIX was received a refund can be requested: the root dialect's
 * 89 days (decisions.md) or BCB's 90 (API Pix). One rule, two windows: a policy of the request.
 */
export const REFUND_WINDOW_DAYS = 89;
export const BCB_REFUND_WINDOW_DAYS = 90;
export const REFUND_WINDOW_MS = REFUND_WINDOW_DAYS * DAY_MS;

/** How a dialect applies the refund rules. */
export interface RefundPolicy {
  /** Days after the original PIX was received during which a refund can be requested. */
  readonly windowDays: number;
  /**
   * BCB's natures: RETIRADA only for a PIX with a withdrawal or change (`saque`/`troco`), up to
   * that part, and ORIGINAL up to the rest. The root dialect takes either nature for any PIX.
   */
  readonly natureLimits: boolean;
  /** A repeated id with the same request: the root answers 200, BCB 201 (its only success status). */
  readonly repeatStatus: 200 | 201;
}

export const ROOT_REFUND_POLICY: RefundPolicy = Object.freeze({ windowDays: REFUND_WINDOW_DAYS, natureLimits: false, repeatStatus: 200 });
export const BCB_REFUND_POLICY: RefundPolicy = Object.freeze({ windowDays: BCB_REFUND_WINDOW_DAYS, natureLimits: true, repeatStatus: 201 });
/** A refund the network has not settled after this long fails and its money comes back. */
export const REFUND_EXPIRATION_MS = 3 * 3_600_000;

export interface RefundRequest {
  valor: string;
  natureza?: 'ORIGINAL' | 'RETIRADA' | undefined;
  descricao?: string | undefined;
}

export interface NewRefundInput {
  original: repo.ReceivedRow;
  refundId: string;
  amountCentavos: bigint;
  natureza: RefundNature;
  descricao: string | null;
  now: Date;
  /** The blocked shard that already holds the money (an accepted MED); else it is taken from available. */
  heldIn?: bigint;
}

const periodExpired = (days: number) =>
  new AppError(422, 'REFUND_PERIOD_EXPIRED', `The refund period (${days} days after the PIX was received) has expired`);

/**
 * A refund of a received PIX, in the caller's transaction, which holds the original's row lock:
 * checks what is still refundable, moves the money from available to blocked (unless a MED
 * already blocked it) and queues the REFUND_IN for settlement.
 */
export async function createRefund(trx: Trx, ispb: string, input: NewRefundInput, policy: RefundPolicy = ROOT_REFUND_POLICY): Promise<repo.RefundRow> {
  const { original, now } = input;
  if (policy.natureLimits) await checkNatureLimit(trx, original, input.natureza, input.amountCentavos);
  const committed = await repo.committedAmount(trx, original.id);
  const refundable = original.amount_centavos - committed;
  if (input.amountCentavos > refundable) {
    throw badRequest(
      'REFUND_EXCEEDS_ORIGINAL',
      `valor exceeds the amount still refundable of this PIX (${formatCentavos(refundable < 0n ? 0n : refundable)})`,
    );
  }
  const rtrId = pixIdentifier('D', ispb, now);
  let hold = input.heldIn;
  if (hold === undefined) {
    const holder = await holderLedgerAccountIds(trx, original.account_id);
    await post(trx, 'refund_in_hold', rtrId, [{ debitAccountId: holder.available, creditAccountId: holder.blocked, amountCentavos: input.amountCentavos }], now);
    hold = holder.blocked;
  }
  return repo.insertRefund(trx, {
    accountId: original.account_id,
    original,
    refundId: input.refundId,
    rtrId,
    amountCentavos: input.amountCentavos,
    natureza: input.natureza,
    descricao: input.descricao,
    holdLedgerAccountId: hold,
    expiresAt: new Date(now.getTime() + REFUND_EXPIRATION_MS),
    now,
  });
}

function amountOf(valor: string): bigint {
  const centavos = parseDecimal2(valor);
  if (centavos === null || centavos <= 0n || centavos > MAX_AMOUNT_CENTAVOS) {
    throw badRequest('INVALID_VALUE', 'valor must be a decimal string with 2 places, greater than 0 ("10.00")');
  }
  return centavos;
}

const sameRequest = (r: repo.RefundRow, amount: bigint, natureza: RefundNature, descricao: string | null) =>
  r.amount_centavos === amount && r.natureza === natureza && r.descricao === descricao;

/**
 * PUT /pix/{e2eid}/devolucao/{id}: 201 with a new refund, the refund's current state (200, or
 * the policy's status) when the same id comes again with the same body, 409 when it comes with
 * another.
 */
export async function requestRefund(
  deps: RefundsDeps,
  accountId: bigint,
  endToEndId: string,
  refundId: string,
  body: RefundRequest,
  policy: RefundPolicy = ROOT_REFUND_POLICY,
) {
  const amount = amountOf(body.valor);
  const natureza = body.natureza ?? 'ORIGINAL';
  const descricao = body.descricao ?? null;
  const now = deps.clock.now();
  const result = await deps.db.transaction().execute(async (trx) => {
    const original = await repo.lockReceived(trx, accountId, endToEndId);
    if (!original) throw notFound('TRANSACTION_NOT_FOUND', 'No PIX received by this account has that endToEndId');
    const existing = await repo.findRefund(trx, original.id, refundId);
    if (existing) {
      if (!sameRequest(existing, amount, natureza, descricao)) {
        throw conflict('REFUND_ID_REUSED', 'This refund id was already used for this PIX with a different request');
      }
      return { status: policy.repeatStatus, created: false, refund: existing };
    }
    if (now.getTime() - original.created_at.getTime() > policy.windowDays * DAY_MS) throw periodExpired(policy.windowDays);
    const refund = await createRefund(trx, deps.ispb, { original, refundId, amountCentavos: amount, natureza, descricao, now }, policy);
    return { status: 201 as const, created: true, refund };
  });
  if (result.created) deps.onHighPriority?.();
  return { status: result.status, body: refundView(result.refund) };
}

export async function getRefund(deps: RefundsDeps, accountId: bigint, endToEndId: string, refundId: string) {
  const refund = await repo.findAccountRefund(deps.db, accountId, endToEndId, refundId);
  if (!refund) throw notFound('REFUND_NOT_FOUND', 'Refund not found');
  return refundView(refund);
}
