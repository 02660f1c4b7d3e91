import { maskDocument } from '../../lib/document.ts';
import { centavosToNumber, formatCentavos } from '../../lib/money.ts';
import type { TransactionRow, TransactionStatus, TransactionType } from './repo.ts';

export const STATUS_LABELS: Record<TransactionStatus, string> = { PENDING: 'Pendente', CONFIRMED: 'Confirmado', ERROR: 'Error' };
export const TYPE_LABELS: Record<TransactionType, string> = {
  PAYMENT: 'Pix in',
  WITHDRAW: 'Pix out',
  REFUND_IN: 'Refund in',
  REFUND_OUT: 'Refund out',
};
/** A filter names a status or a type by its code or by the label the list prints. */
export const STATUS_BY_LABEL = Object.fromEntries(Object.entries(STATUS_LABELS).map(([code, label]) => [label, code])) as Record<string, TransactionStatus>;
export const TYPE_BY_LABEL = Object.fromEntries(Object.entries(TYPE_LABELS).map(([code, label]) => [label, code])) as Record<string, TransactionType>;

export const MOVEMENT: Record<TransactionType, 'CREDIT' | 'DEBIT'> = {
  PAYMENT: 'CREDIT',
  REFUND_OUT: 'CREDIT',
  WITHDRAW: 'DEBIT',
  REFUND_IN: 'DEBIT',
};

/** What the account holder ends up with: a debit costs the fee on top, a credit loses it. */
function finalCentavos(row: TransactionRow): bigint {
  return MOVEMENT[row.type] === 'DEBIT' ? row.amount_centavos + row.fee_centavos : row.amount_centavos - row.fee_centavos;
}

/** The public list view (GET /api/transactions and the PIX-key views). */
export function listView(row: TransactionRow) {
  return {
    transactionId: row.id.toString(),
    externalId: row.external_id,
    status: STATUS_LABELS[row.status],
    operationType: TYPE_LABELS[row.type],
    movementType: MOVEMENT[row.type],
    originalAmount: centavosToNumber(row.amount_centavos),
    feeAmount: centavosToNumber(row.fee_centavos),
    finalAmount: centavosToNumber(finalCentavos(row)),
    endToEndId: row.end_to_end_id,
    createdAt: row.created_at.toISOString(),
    processedAt: row.processed_at ? row.processed_at.toISOString() : null,
    counterpart: {
      name: row.counterpart_name,
      document: maskDocument(row.counterpart_document),
      bank: {
        bankISPB: row.counterpart_ispb,
        bankName: row.counterpart_bank_name,
        bankCode: row.counterpart_bank_code,
        accountBranch: row.counterpart_branch,
        accountNumber: row.counterpart_account,
      },
    },
  };
}

/** The status view (GET /api/pix/transaction/{id}): raw codes, amounts as strings. */
export function statusView(row: TransactionRow) {
  return {
    id: row.id.toString(),
    externalId: row.external_id,
    type: row.type,
    status: row.status,
    originalAmount: formatCentavos(row.amount_centavos),
    feeAmount: formatCentavos(row.fee_centavos),
    finalAmount: formatCentavos(finalCentavos(row)),
    e2eId: row.end_to_end_id,
    counterpartName: row.counterpart_name,
    counterpartDocument: maskDocument(row.counterpart_document),
    counterpartAccountBankCode: row.counterpart_bank_code,
    counterpartAccountBranch: row.counterpart_branch,
    counterpartAccountNumber: row.counterpart_account,
    counterpartAccountIspb: row.counterpart_ispb,
    counterpartAccountBankName: row.counterpart_bank_name,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    processedAt: row.processed_at ? row.processed_at.toISOString() : null,
    errorReason: row.error_reason,
  };
}
