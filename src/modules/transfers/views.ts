import { centavosToNumber } from '../../lib/money.ts';
import type { AcceptedTransfer } from './repo.ts';

/** The transfer's `type` on the wire for each status of its transaction. */
export const TRANSFER_TYPES = { PENDING: 'PENDING', CONFIRMED: 'COMPLETED', ERROR: 'ERROR' } as const satisfies Record<
  AcceptedTransfer['status'],
  string
>;

/**
 * The answer of POST /dict/pix, the first one and every replay of it alike: both are built here
 * from the stored answer's columns, so money and time are converted once (lib/money.ts).
 */
export function transferView(transfer: AcceptedTransfer) {
  return {
    endToEndId: transfer.endToEndId,
    eventDate: transfer.acceptedAt.toISOString(),
    id: Number(transfer.id),
    payment: { amount: centavosToNumber(transfer.amountCentavos) },
    type: TRANSFER_TYPES[transfer.status],
  };
}
