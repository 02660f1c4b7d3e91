import assert from 'node:assert/strict';
import type { Db } from '../src/db/client.ts';
import { enqueueMany } from '../src/modules/notifications/repo.ts';
import type { TestApp } from './harness.ts';

/**
 * A document as the notifications mask it (CPF `***.456.789-**`, CNPJ `12.345.678/****-**`),
 * written out here rather than taken from lib/document.ts, so that a test checks the mask.
 */
export function masked(document: string): string {
  return document.length === 11
    ? `***.${document.slice(3, 6)}.${document.slice(6, 9)}-**`
    : `${document.slice(0, 2)}.${document.slice(2, 5)}.${document.slice(5, 8)}/****-**`;
}

/** The outbox events a transaction wrote, oldest first. */
export const outboxOf = (db: Db, transactionId: number | bigint) =>
  db.selectFrom('outbox').selectAll().where('transaction_id', '=', BigInt(transactionId)).orderBy('id').execute();

/**
 * The payload of the one event a transaction wrote, after checking that it wrote exactly one,
 * of this type and, where given, for this account.
 */
export async function onlyEvent(db: Db, transactionId: number | bigint, eventType: string, accountId?: number) {
  const events = await outboxOf(db, transactionId);
  assert.equal(events.length, 1, `the events of transaction ${transactionId}`);
  assert.equal(events[0]!.event_type, eventType);
  if (accountId !== undefined) assert.equal(Number(events[0]!.account_id), accountId);
  return events[0]!.payload;
}

/** The RECEIVE payload of a Pix received and liquidated. */
export function receivePayload(pix: { id: number; txId?: string | null; amount: string; endToEndId: string; debtor: { name: string; document: string } }) {
  return {
    type: 'RECEIVE',
    data: {
      id: pix.id,
      txId: pix.txId ?? null,
      status: 'LIQUIDATED',
      payment: { amount: pix.amount, currency: 'BRL' },
      endToEndId: pix.endToEndId,
      debtorAccount: pix.debtor,
    },
  };
}

/** `count` cash_in notifications for the account, each with its deliveries, due now; `data(i)` is the i-th one's data. */
export async function notifyDue(t: TestApp, accountId: number, count: number, data: (i: number) => Record<string, unknown> = (i) => ({ n: i })): Promise<void> {
  const now = t.clock.now();
  await t.db.transaction().execute((trx) =>
    enqueueMany(
      trx,
      Array.from({ length: count }, (_, i) => ({ accountId: BigInt(accountId), eventType: 'cash_in' as const, transactionId: null, payload: { type: 'RECEIVE' as const, data: data(i) }, now })),
    ),
  );
}
