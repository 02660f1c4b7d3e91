import type { MedReason, MedStatus } from '../../db/schema.ts';
import { maskDocument } from '../../lib/document.ts';
import { centavosToNumber, formatCentavos } from '../../lib/money.ts';

/** The transaction fields the V2 payloads are built from. */
export interface PayloadSource {
  id: bigint;
  amount_centavos: bigint;
  end_to_end_id: string | null;
  pix_key: string | null;
  txid: string | null;
  idempotency_key: string | null;
  description: string | null;
  counterpart_name: string | null;
  counterpart_document: string | null;
  counterpart_ispb: string | null;
}

const payment = (centavos: bigint) => ({ amount: formatCentavos(centavos), currency: 'BRL' });

/** TRANSFER (`cash_out`): a transfer we sent has settled, or failed with a reason. */
export function transferPayload(tx: PayloadSource, outcome: { status: 'LIQUIDATED' } | { status: 'ERROR'; reason: string }) {
  return {
    type: 'TRANSFER' as const,
    data: {
      id: Number(tx.id),
      txId: tx.txid,
      pixKey: tx.pix_key,
      status: outcome.status,
      ...(outcome.status === 'ERROR' ? { errorReason: outcome.reason } : {}),
      payment: payment(tx.amount_centavos),
      endToEndId: tx.end_to_end_id,
      creditDebitType: 'DEBIT',
      idempotencyKey: tx.idempotency_key,
      creditorAccount: {
        name: tx.counterpart_name,
        document: maskDocument(tx.counterpart_document),
        ispb: tx.counterpart_ispb,
      },
      remittanceInformation: tx.description ?? '',
    },
  };
}

/** RECEIVE (`cash_in`): a PIX reached the account (a paid charge carries its txid). */
export function receivePayload(tx: PayloadSource) {
  return {
    type: 'RECEIVE' as const,
    data: {
      id: Number(tx.id),
      txId: tx.txid,
      status: 'LIQUIDATED',
      payment: payment(tx.amount_centavos),
      endToEndId: tx.end_to_end_id,
      debtorAccount: { name: tx.counterpart_name, document: maskDocument(tx.counterpart_document) },
    },
  };
}

/**
 * REFUND (`refund_in` when we refunded a received PIX, `refund_out` when a refund of one of our
 * transfers reached us). `original` is the refunded transaction, `refund` the refund itself.
 * A refund of ours that the payer's institution refused is notified too, with status `ERROR`
 * and the reason (as a failed transfer is), so the account learns its money came back.
 */
export function refundPayload(
  original: PayloadSource,
  refund: PayloadSource & { processed_at: Date | null; created_at: Date },
  creditDebitType: 'CREDIT' | 'DEBIT',
  outcome: { status: 'REFUNDED' } | { status: 'ERROR'; reason: string } = { status: 'REFUNDED' },
) {
  return {
    type: 'REFUND' as const,
    data: {
      id: Number(refund.id),
      txId: original.txid ?? original.end_to_end_id,
      status: outcome.status,
      ...(outcome.status === 'ERROR' ? { errorReason: outcome.reason } : {}),
      payment: payment(original.amount_centavos),
      refunds: [
        {
          status: outcome.status === 'ERROR' ? 'ERROR' : 'LIQUIDATED',
          payment: { amount: centavosToNumber(refund.amount_centavos), currency: 'BRL' },
          endToEndId: refund.end_to_end_id,
          eventDate: (refund.processed_at ?? refund.created_at).toISOString(),
          information: refund.description ?? '',
        },
      ],
      endToEndId: original.end_to_end_id,
      creditDebitType,
    },
  };
}

/** The refund an accepted MED executed. */
export interface MedRefund {
  id: string;
  rtrId: string;
  natureza: string;
  status: string;
}

/**
 * MED (`med_created`, `med_accepted`, `med_rejected`): a dispute against a PIX the account
 * received. `amount` is what the MED blocks (at most what was still refundable of the PIX);
 * `refund` is set once it is accepted.
 */
export function medPayload(
  med: { id: bigint; amount_centavos: bigint; reason: MedReason; details: string | null; status: MedStatus; created_at: Date; closed_at: Date | null },
  disputed: { id: bigint; end_to_end_id: string | null },
  refund: MedRefund | null,
) {
  return {
    type: 'MED' as const,
    data: {
      id: Number(med.id),
      endToEndId: disputed.end_to_end_id,
      transactionId: Number(disputed.id),
      amount: formatCentavos(med.amount_centavos),
      currency: 'BRL' as const,
      reason: med.reason,
      details: med.details,
      status: med.status,
      createdAt: med.created_at.toISOString(),
      closedAt: med.closed_at ? med.closed_at.toISOString() : null,
      refund,
    },
  };
}
