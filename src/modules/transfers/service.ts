import type { Db } from '../../db/client.ts';
import { AppError, badRequest, conflict, isDatabaseUnavailable, unprocessable } from '../../http/errors.ts';
import { assert } from '../../lib/assert.ts';
import type { Clock } from '../../lib/clock.ts';
import { documentType, normalizeDocument } from '../../lib/document.ts';
import { pixIdentifier } from '../../lib/ids.ts';
import { MAX_AMOUNT_CENTAVOS, numberToCentavos } from '../../lib/money.ts';
import { requestHash } from '../../lib/stable-json.ts';
import { insufficientFunds } from '../ledger/service.ts';
import type { DirectoryLookups, LookupResult } from '../directory/lookups.ts';
import { tracing } from '../../telemetry/hooks.ts';
import { saveTraceContext } from '../../telemetry/repo.ts';
import { requirePixKey } from '../directory/service.ts';
import type { TransferBatcher } from './batcher.ts';
import type { CreateOutcome } from './repo.ts';
import { transferView } from './views.ts';

export interface TransfersDeps {
  readonly db: Db;
  readonly batcher: TransferBatcher;
  readonly lookups: DirectoryLookups;
  readonly clock: Clock;
  readonly ispb: string;
  /** Called after a HIGH transfer is accepted, so the worker settles it at once. */
  readonly onHighPriority?: () => void;
  /** Counts accepted transfers (the operator's metrics). */
  readonly metrics?: { transferCreated(): void };
}

export interface TransferRequest {
  pixKey: string;
  creditorDocument?: string | undefined;
  priority?: 'HIGH' | 'NORM' | undefined;
  description?: string | undefined;
  expiration?: number | undefined;
  payment: { currency: string; amount: number };
  ispbDeny?: string[] | undefined;
  externalId?: string | undefined;
}

export interface TransferAnswer {
  body: ReturnType<typeof transferView>;
  replayed: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const DEFAULT_EXPIRATION_SECONDS = 600;

export function requireIdempotencyKey(raw: string | string[] | undefined): string {
  if (raw === undefined || raw === '') throw badRequest('IDEMPOTENCY_KEY_REQUIRED', 'x-idempotency-key header is required');
  if (Array.isArray(raw) || !UUID.test(raw)) throw badRequest('IDEMPOTENCY_KEY_INVALID', 'x-idempotency-key must be a UUID');
  return raw.toLowerCase();
}

function amountOf(request: TransferRequest): bigint {
  const centavos = numberToCentavos(request.payment.amount);
  if (centavos === null || centavos <= 0n || centavos > MAX_AMOUNT_CENTAVOS) {
    throw badRequest('INVALID_AMOUNT', 'payment.amount must be a number greater than 0 with at most 2 decimals');
  }
  return centavos;
}

function creditorDocumentOf(request: TransferRequest): string | null {
  if (request.creditorDocument === undefined) {
    if (request.priority === 'HIGH') throw badRequest('CREDITOR_DOCUMENT_REQUIRED', 'creditorDocument is required when priority is HIGH');
    return null;
  }
  const document = normalizeDocument(request.creditorDocument);
  if (!documentType(document)) throw badRequest('INVALID_CREDITOR_DOCUMENT', 'creditorDocument must be a valid CPF or CNPJ');
  return document;
}

const OUTCOME_ERRORS: Partial<Record<CreateOutcome, () => AppError>> = {
  in_flight: () => conflict('IDEMPOTENCY_IN_FLIGHT', 'A request with this x-idempotency-key is still being processed'),
  idempotency_mismatch: () =>
    unprocessable('IDEMPOTENCY_KEY_REUSED', 'This x-idempotency-key was already used with a different request'),
  key_not_found: () => unprocessable('PIX_KEY_NOT_FOUND', 'PIX key not found in the directory'),
  own_key: () => unprocessable('OWN_PIX_KEY', 'The PIX key belongs to the paying account'),
  ispb_denied: () => unprocessable('ISPB_DENIED', 'The PIX key belongs to an institution listed in ispbDeny'),
  creditor_mismatch: () => unprocessable('CREDITOR_DOCUMENT_MISMATCH', 'creditorDocument does not match the owner of the PIX key'),
  external_id_taken: () => conflict('EXTERNAL_ID_TAKEN', 'externalId is already used by another transfer of this account'),
  insufficient_funds: insufficientFunds,
  // The same answer as with the owner's document (pix_transfer_create judges the document last).
  insufficient_funds_miss: insufficientFunds,
};

/**
 * What each outcome makes of the directory look-up the request paid for in advance. Idempotency
 * is decided before the key is read: a replay or a refusal of the key looked nothing up.
 */
const LOOKUP_RESULTS: Record<CreateOutcome, LookupResult> = {
  created: 'transfer',
  replay: 'none',
  in_flight: 'none',
  idempotency_mismatch: 'none',
  key_not_found: 'missing',
  creditor_mismatch: 'missing',
  own_key: 'found',
  ispb_denied: 'found',
  external_id_taken: 'found',
  insufficient_funds: 'found',
  insufficient_funds_miss: 'missing',
};

/** Two transfers of one account cannot race on an externalId (their batches lock the account
 * first), but the unique index stays the last word. */
function isExternalIdRace(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string; message?: string };
  return e.code === '23505' && `${e.constraint ?? ''}${e.message ?? ''}`.includes('transactions_account_external_idx');
}

/**
 * POST /dict/pix. Validation happens here; the rest (idempotency, directory, debit, stored
 * answer) is one database call, so the transfer and its idempotency record commit together. A
 * new answer and a replayed one are built alike, by transferView.
 * The directory look-up that call makes is paid for before it is submitted (429 when the
 * account's look-ups are spent) and settled once its outcome is known.
 */
export async function createTransfer(
  deps: TransfersDeps,
  accountId: bigint,
  idempotencyKey: string,
  request: TransferRequest,
): Promise<TransferAnswer> {
  const { key: pixKey } = requirePixKey(request.pixKey, 'pixKey');
  const amountCentavos = amountOf(request);
  const creditorDocument = creditorDocumentOf(request);
  const priority = request.priority ?? 'NORM';
  const lookup = await deps.lookups.charge(accountId);
  const now = deps.clock.now();
  let row;
  try {
    row = await deps.batcher.submit({
      accountId,
      idempotencyKey,
      requestHash: requestHash(request),
      amountCentavos,
      pixKey,
      priority,
      expirationSeconds: request.expiration ?? DEFAULT_EXPIRATION_SECONDS,
      creditorDocument,
      ispbDeny: request.ispbDeny ?? null,
      description: request.description ?? null,
      externalId: request.externalId ?? null,
      endToEndId: pixIdentifier('E', deps.ispb, now),
      now,
    });
  } catch (error) {
    // A full queue refused the transfer before any look-up, and a database that could not answer
    // committed nothing and asks for the same request again: neither costs anything. Any other
    // failure may have come after the key was read (and only when it exists): it costs a look-up.
    const nothing = (error instanceof AppError && error.code === 'OVERLOADED') || isDatabaseUnavailable(error);
    await lookup.settle(nothing ? 'none' : 'found');
    if (isExternalIdRace(error)) throw OUTCOME_ERRORS.external_id_taken!();
    throw error;
  }
  await lookup.settle(LOOKUP_RESULTS[row.outcome]);
  const failure = OUTCOME_ERRORS[row.outcome];
  if (failure) throw failure();
  assert(row.transfer !== null, `no answer for the outcome '${row.outcome}'`);
  if (row.outcome === 'created') {
    deps.metrics?.transferCreated();
    // Tracing on: the settlement and the webhooks of this transfer continue this request's trace.
    const traceparent = tracing().traceparent();
    if (traceparent) await saveTraceContext(deps.db, row.transfer!.id, traceparent, now);
  }
  if (row.outcome === 'created' && priority === 'HIGH') deps.onHighPriority?.();
  return { body: transferView(row.transfer), replayed: row.outcome === 'replay' };
}
