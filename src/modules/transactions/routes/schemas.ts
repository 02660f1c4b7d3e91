import { Type } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../../../http/schemas.ts';
import { DATE_OR_TIMESTAMP_PATTERN } from '../../../lib/dates.ts';
import { STATUS_LABELS, TYPE_LABELS } from '../views.ts';
import { accountSecurity } from '../../auth/scopes.ts';

/** The tag and security every transaction operation documents. */
export const common = { tags: ['Transactions'], security: accountSecurity('transactions.read') };

const Status = Type.Union([Type.Literal('PENDING'), Type.Literal('CONFIRMED'), Type.Literal('ERROR')]);
const STATUS_CODES = ['PENDING', 'CONFIRMED', 'ERROR'] as const;
const TYPE_CODES = ['PAYMENT', 'WITHDRAW', 'REFUND_IN', 'REFUND_OUT'] as const;
/** Filters take the codes or the labels the list prints (`Confirmado`, `Pix out`). */
const StatusFilter = StringEnum([...STATUS_CODES, ...STATUS_CODES.map((c) => STATUS_LABELS[c])], {
  description: 'PENDING, CONFIRMED or ERROR, or the label: Pendente, Confirmado, Error',
});
const TypeFilter = StringEnum([...TYPE_CODES, ...TYPE_CODES.map((c) => TYPE_LABELS[c])], {
  description: 'PAYMENT, WITHDRAW, REFUND_IN or REFUND_OUT, or the label: Pix in, Pix out, Refund in, Refund out',
});
const DateParam = (description: string) => Type.String({ pattern: DATE_OR_TIMESTAMP_PATTERN, description });
const NString = Nullable(Type.String());

const baseQuery = (maxSize: number, defaultDays: number) => ({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: '1-indexed (default 1)' })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: maxSize, description: `Page size, at most ${maxSize} (default 20)` })),
  status: Type.Optional(StatusFilter),
  type: Type.Optional(TypeFilter),
  startDate: Type.Optional(DateParam(`Date (São Paulo) or timestamp; default ${defaultDays} days before endDate`)),
  endDate: Type.Optional(DateParam('Date (inclusive, São Paulo) or timestamp; default now')),
});
export const AccountQuery = Type.Object(
  {
    ...baseQuery(100, 31),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    endToEndId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
export const PixKeyQuery = Type.Object(baseQuery(1000, 30), { additionalProperties: false });

export const ListItem = Type.Object({
  transactionId: Type.String(),
  externalId: NString,
  status: Type.String({ description: 'Pendente, Confirmado or Error' }),
  operationType: Type.String({ description: 'Pix in, Pix out, Refund in or Refund out' }),
  movementType: StringEnum(['CREDIT', 'DEBIT']),
  originalAmount: Type.Number(),
  feeAmount: Type.Number(),
  finalAmount: Type.Number(),
  endToEndId: NString,
  createdAt: Timestamp(),
  processedAt: Nullable(Timestamp()),
  counterpart: Type.Object({
    name: NString,
    document: Nullable(Type.String({ description: 'Masked' })),
    bank: Type.Object({ bankISPB: NString, bankName: NString, bankCode: NString, accountBranch: NString, accountNumber: NString }),
  }),
});

export const Metadata = Type.Object({
  page: Type.Integer(),
  size: Type.Integer(),
  total: Type.Integer(),
  totalPages: Type.Integer(),
  hasNext: Type.Boolean(),
  hasPrevious: Type.Boolean(),
});
export const ListResponse = Type.Object({ data: Type.Array(ListItem), metadata: Metadata });

export const StatusView = Type.Object({
  id: Type.String(),
  externalId: NString,
  type: Type.String(),
  status: Status,
  originalAmount: Type.String(),
  feeAmount: Type.String(),
  finalAmount: Type.String(),
  e2eId: NString,
  counterpartName: NString,
  counterpartDocument: NString,
  counterpartAccountBankCode: NString,
  counterpartAccountBranch: NString,
  counterpartAccountNumber: NString,
  counterpartAccountIspb: NString,
  counterpartAccountBankName: NString,
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
  processedAt: Nullable(Timestamp()),
  errorReason: Nullable(
    Type.String({
      description:
        'Why the transaction ended in ERROR; in the sandbox, why a PENDING transfer is held by a settlement delay fault ' +
        '(`Settlement delayed 120000 ms by sandbox fault 3: pending until ...`); null otherwise',
    }),
  ),
});

export const Identifier = Type.String({ minLength: 1, maxLength: 64, description: 'Numeric id, externalId or endToEndId' });
export const PixKeyParam = Type.String({ minLength: 1, maxLength: 77 });
