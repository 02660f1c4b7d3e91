/**
 * Batches of due-date charges (BCB's `lotecobv`). A batch is the account's id, a description
 * and the charges its first request named, in order; each one is created (or, when the batch is
 * sent again, replaced or revised) by the same core as PUT and PATCH /cobv/{txid}, in a
 * transaction of its own that also records the item's outcome: CRIADA, or NEGADA with the
 * problem. Items are written EM_PROCESSAMENTO first and processed before the answer (202), so
 * a GET right after shows each outcome; an item left EM_PROCESSAMENTO was interrupted.
 */
import { AppError, badRequest, notFound } from '../../http/errors.ts';
import { ruleFieldsOf } from '../../http/rule-fields.ts';
import { listInterval, type ChargeListDeps, type ChargesDeps } from '../charges/service.ts';
import * as repo from './batch-repo.ts';
import { putCobv, reviseCobv, type CobvInput, type CobvRevision } from './service.ts';

/** At most this many charges in one batch request. */
export const MAX_BATCH_ITEMS = 1000;

export interface BatchInput {
  descricao: string;
  cobsv: (CobvInput & { txid: string })[];
}

export interface BatchRevision {
  descricao?: string | undefined;
  cobsv?: (CobvRevision & { txid: string })[] | undefined;
}

const batchNotFound = () => notFound('COBV_BATCH_NOT_FOUND', 'Lote de cobranças com vencimento não encontrado');

function txidsOf(items: readonly { txid: string }[]): string[] {
  const txids = items.map((item) => item.txid);
  if (txids.length > MAX_BATCH_ITEMS) throw badRequest('COBV_BATCH_MISMATCH', `cobsv holds at most ${MAX_BATCH_ITEMS} charges`);
  const repeated = txids.find((txid, i) => txids.indexOf(txid) !== i);
  if (repeated !== undefined) throw badRequest('COBV_BATCH_MISMATCH', `cobsv names the txid ${repeated} more than once`);
  return txids;
}

/** Creates or changes one charge of a batch, recording its outcome. */
async function processItem(deps: ChargesDeps, accountId: bigint, batchId: bigint, item: CobvRevision & { txid: string }, revise: boolean) {
  const { txid, ...input } = item;
  const done = { done: (trx: Parameters<typeof repo.setItems>[0], _row: unknown) => repo.setItems(trx, accountId, batchId, [txid], 'CRIADA', null) };
  try {
    if (revise) await reviseCobv(deps, accountId, txid, input, done);
    else await putCobv(deps, accountId, txid, input, done);
  } catch (error) {
    if (!(error instanceof AppError) || error.statusCode >= 500) throw error;
    const fields = ruleFieldsOf(error, input);
    await repo.setItems(deps.db, accountId, batchId, [txid], 'NEGADA', { status: error.statusCode, code: error.code, detail: error.message, ...(fields.length > 0 ? { fields } : {}) });
  }
}

/**
 * PUT /lotecobv/{id}: creates the batch and its charges; sent again, with exactly the charges of
 * its first request, replaces each charge (creating those that were refused). A new batch may
 * name no txid the account already used.
 */
export async function putBatch(deps: ChargesDeps, accountId: bigint, batchId: bigint, input: BatchInput): Promise<void> {
  const txids = txidsOf(input.cobsv);
  const existing = await deps.db.transaction().execute(async (trx) => {
    await repo.lockBatchCreation(trx, accountId);
    const batch = await repo.lockBatch(trx, accountId, batchId);
    if (batch) {
      const first = await repo.batchTxids(trx, accountId, batchId);
      if (first.length !== txids.length || !first.every((txid) => txids.includes(txid))) {
        throw badRequest('COBV_BATCH_MISMATCH', 'A batch sent again must name exactly the charges of its first request');
      }
      await repo.updateDescricao(trx, accountId, batchId, input.descricao);
      return true;
    }
    const used = await repo.usedTxids(trx, accountId, txids);
    if (used.length > 0) throw badRequest('COBV_BATCH_TXID_TAKEN', `These txids are already used by charges or batches of the account: ${used.slice(0, 5).join(', ')}`);
    await repo.insertBatch(trx, { accountId, id: batchId, descricao: input.descricao, txids, now: deps.clock.now() });
    return false;
  });
  if (existing) await repo.setItems(deps.db, accountId, batchId, txids, 'EM_PROCESSAMENTO', null);
  for (const item of input.cobsv) await processItem(deps, accountId, batchId, item, false);
}

/** PATCH /lotecobv/{id}: revises some charges of the batch (creating those that were refused). */
export async function reviseBatch(deps: ChargesDeps, accountId: bigint, batchId: bigint, input: BatchRevision): Promise<void> {
  const items = input.cobsv ?? [];
  const txids = txidsOf(items);
  // The charges the batch created are revised; those it could not create are created now.
  const created = new Set((await repo.batchItems(deps.db, accountId, [batchId])).filter((i) => i.charge_created_at !== null).map((i) => i.txid));
  await deps.db.transaction().execute(async (trx) => {
    if (!(await repo.lockBatch(trx, accountId, batchId))) throw batchNotFound();
    const first = new Set(await repo.batchTxids(trx, accountId, batchId));
    const foreign = txids.filter((txid) => !first.has(txid));
    if (foreign.length > 0) throw badRequest('COBV_BATCH_MISMATCH', `The batch's first request did not name: ${foreign.slice(0, 5).join(', ')}`);
    if (input.descricao !== undefined) await repo.updateDescricao(trx, accountId, batchId, input.descricao);
    await repo.setItems(trx, accountId, batchId, txids, 'EM_PROCESSAMENTO', null);
  });
  for (const item of items) await processItem(deps, accountId, batchId, item, created.has(item.txid));
}

/** GET /lotecobv/{id}: the batch with each charge's outcome. */
export async function getBatch(deps: ChargesDeps, accountId: bigint, batchId: bigint) {
  const batch = await repo.findBatch(deps.db, accountId, batchId);
  if (!batch) throw batchNotFound();
  return { batch, items: await repo.batchItems(deps.db, accountId, [batchId]) };
}

export interface BatchListQuery {
  inicio: string;
  fim: string;
  'paginacao.paginaAtual'?: number | undefined;
  'paginacao.itensPorPagina'?: number | undefined;
}

/** At most this many batches in a page of GET /lotecobv: each brings up to MAX_BATCH_ITEMS items. */
export const MAX_BATCHES_PER_PAGE = 100;

/** GET /lotecobv: the account's batches created in [inicio, fim] (at most 31 days apart, as every list), newest first, with their items. */
export async function listBatchesOf(deps: ChargeListDeps, accountId: bigint, query: BatchListQuery) {
  const { from, to } = listInterval(query.inicio, query.fim);
  const paginaAtual = query['paginacao.paginaAtual'] ?? 0;
  const itensPorPagina = Math.min(query['paginacao.itensPorPagina'] ?? MAX_BATCHES_PER_PAGE, MAX_BATCHES_PER_PAGE);
  const { rows, total, items } = await deps.lists.run(accountId, async (db) => {
    const page = await repo.listBatches(db, accountId, from, to, { offset: paginaAtual * itensPorPagina, limit: itensPorPagina });
    return { ...page, items: await repo.batchItems(db, accountId, page.rows.map((r) => r.id)) };
  });
  const parametros = {
    inicio: from.toISOString(),
    fim: to.toISOString(),
    paginacao: { paginaAtual, itensPorPagina, quantidadeDePaginas: Math.max(1, Math.ceil(total / itensPorPagina)), quantidadeTotalDeItens: total },
  };
  return { parametros, batches: rows.map((batch) => ({ batch, items: items.filter((i) => i.batch_id === batch.id) })) };
}

