import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIST_LIMITS } from '../../http/list-queries.ts';
import { BEARER_SECURITY, errorResponses, Nullable, StringEnum, Timestamp } from '../../http/schemas.ts';
import { DATE_OR_TIMESTAMP_PATTERN } from '../../lib/dates.ts';
import { requirePixKey } from '../directory/service.ts';
import { findOne, listForAccount, type TransactionsDeps } from './service.ts';
import { listView, STATUS_LABELS, statusView, TYPE_LABELS } from './views.ts';

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
const AccountQuery = Type.Object(
  {
    ...baseQuery(100, 31),
    externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    endToEndId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { additionalProperties: false },
);
const PixKeyQuery = Type.Object(baseQuery(1000, 30), { additionalProperties: false });

const ListItem = Type.Object({
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
const ListResponse = Type.Object({ data: Type.Array(ListItem), metadata: Metadata });

const StatusView = Type.Object({
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
  errorReason: Nullable(Type.String({ description: 'Why the transaction ended in ERROR (null otherwise)' })),
});

const Identifier = Type.String({ minLength: 1, maxLength: 64, description: 'Numeric id, externalId or endToEndId' });
const PixKeyParam = Type.String({ minLength: 1, maxLength: 77 });

export const transactionRoutes =
  (deps: TransactionsDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['Transactions'], security: BEARER_SECURITY };

    app.get(
      '/api/transactions',
      {
        schema: {
          ...common,
          operationId: 'listTransactions',
          summary: "List the account's transactions",
          description: LIST_LIMITS,
          querystring: AccountQuery,
          response: { 200: ListResponse, ...errorResponses(400, 401, 429, 503) },
        },
      },
      async (request) => {
        const { rows, metadata } = await listForAccount(deps, request.accountId, request.query);
        return { data: rows.map(listView), metadata };
      },
    );

    app.get(
      '/api/pix/transaction/:id',
      {
        schema: {
          ...common,
          operationId: 'getTransaction',
          summary: 'A transaction by numeric id, externalId or endToEndId',
          params: Type.Object({ id: Identifier }),
          response: { 200: StatusView, ...errorResponses(401, 404) },
        },
      },
      async (request) => statusView(await findOne(deps, request.accountId, request.params.id)),
    );

    app.get(
      '/api/pix/transactions/pix-key/:pixKey',
      {
        schema: {
          ...common,
          operationId: 'listTransactionsByPixKey',
          summary: 'List the transactions tied to a PIX key (at most 1000 results)',
          description: LIST_LIMITS,
          params: Type.Object({ pixKey: PixKeyParam }),
          querystring: PixKeyQuery,
          response: { 200: ListResponse, ...errorResponses(400, 401, 429, 503) },
        },
      },
      async (request) => {
        const { key: pixKey } = requirePixKey(request.params.pixKey, 'pixKey');
        const { rows, metadata } = await listForAccount(deps, request.accountId, request.query, pixKey);
        return { data: rows.map(listView), metadata };
      },
    );

    app.get(
      '/api/pix/transactions/pix-key/:pixKey/:identifier',
      {
        schema: {
          ...common,
          operationId: 'getTransactionByPixKey',
          summary: 'One transaction of a PIX key by endToEndId, externalId or numeric id',
          description: LIST_LIMITS,
          params: Type.Object({ pixKey: PixKeyParam, identifier: Identifier }),
          response: { 200: ListItem, ...errorResponses(400, 401, 404, 429, 503) },
        },
      },
      async (request) => listView(await findOne(deps, request.accountId, request.params.identifier, requirePixKey(request.params.pixKey, 'pixKey').key)),
    );
  };
