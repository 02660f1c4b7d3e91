/** The payer's side of Pix Automático at the root paths: its schemas, one for validation and the OpenAPI document. */
import { Type } from 'typebox';
import { Nullable, StringEnum, Timestamp } from '../../http/schemas.ts';
import { Metadata } from '../transactions/routes/schemas.ts';

export const AUTHORIZATION_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'CANCELLED', 'EXPIRED', 'WITHDRAWN'] as const;
export const PAYER_CHARGE_STATUSES = ['RECEIVED', 'SCHEDULED', 'FAILED', 'PAID', 'REJECTED', 'CANCELLED', 'EXPIRED'] as const;

const Day = (description: string) => Type.String({ format: 'date', description });
const Amount = (description: string) => Nullable(Type.String({ pattern: '^[0-9]{1,10}\\.[0-9]{2}$', description }));
const History = Type.Array(Type.Object({ status: Type.String({ description: "BCB's status it reached" }), at: Timestamp() }));
const Code = Type.Object({ code: Type.String({ description: "The catalog's code" }), description: Type.String() });
const Cancellation = Type.Object({
  requestedBy: StringEnum(['USUARIO_PAGADOR', 'USUARIO_RECEBEDOR', 'PSP_PAGADOR', 'PSP_RECEBEDOR'] as const, { description: "BCB's solicitante" }),
  code: Type.String({ description: "The catalog's code: SLDB, the payer's request; SLCR, the receiver's; CCLD, with its authorization" }),
  description: Type.String(),
});
const Receiver = Type.Object({
  name: Type.String(),
  document: Type.String({ description: "The receiver's CNPJ" }),
  ispb: Type.String({ pattern: '^[0-9]{8}$', description: "The receiver's PSP" }),
});

export const Authorization = Type.Object({
  idRec: Type.String({ description: "The recurrence's id (BCB's idRec)" }),
  status: StringEnum(AUTHORIZATION_STATUSES, {
    description:
      'PENDING: asked of the payer, waiting for its answer; APPROVED; REJECTED; CANCELLED (by either side); EXPIRED (the solicitation was not answered in time); ' +
      'WITHDRAWN (the receiver took the solicitation back before the payer answered)',
  }),
  journey: Nullable(Type.String({ description: 'How it was approved: JORNADA_1 (a solicitation), JORNADA_2 (its code), JORNADA_3 (a composite code of a cob), JORNADA_4 (of a cobv)' })),
  receiver: Receiver,
  contract: Type.String(),
  object: Nullable(Type.String()),
  debtor: Type.Object({ name: Type.String(), document: Type.String() }),
  frequency: StringEnum(['SEMANAL', 'MENSAL', 'TRIMESTRAL', 'SEMESTRAL', 'ANUAL'] as const, { description: "BCB's periodicidade" }),
  startDate: Day('The first cycle starts on this day'),
  endDate: Nullable(Type.String({ format: 'date', description: 'No charge falls due after this day' })),
  amount: Type.Object({
    fixed: Amount('Every charge is this amount (the payer sets no maximum then)'),
    receiverMinimum: Amount("The receiver's floor of the payer's maximum"),
    payerMaximum: Amount('The most a charge may ask, as the payer set it when approving'),
    currency: Type.Literal('BRL'),
  }),
  retryPolicy: StringEnum(['NAO_PERMITE', 'PERMITE_3R_7D'] as const, { description: 'PERMITE_3R_7D: the receiver may retry a failed charge 3 times within 7 days' }),
  solicitation: Type.Union([
    Type.Object({ id: Type.String({ description: 'idSolicRec' }), status: Type.String({ description: "BCB's status of the solicitation" }), expiresAt: Timestamp() }),
    Type.Null(),
  ]),
  rejection: Type.Union([Code, Type.Null()]),
  cancellation: Type.Union([Cancellation, Type.Null()]),
  history: History,
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

export const PayerCharge = Type.Object({
  id: Type.Integer({ description: 'The id the payer names the charge by' }),
  txid: Type.String({ description: "The receiver's txid of the charge" }),
  idRec: Type.String(),
  status: StringEnum(PAYER_CHARGE_STATUSES, {
    description:
      'RECEIVED: the instruction arrived, the payer PSP answers it within 2 hours; SCHEDULED: debited on its date between 00:00 and 08:00; ' +
      'FAILED: an attempt failed and the receiver may retry; PAID; REJECTED (whole charge); CANCELLED; EXPIRED (no attempt paid it)',
  }),
  receiver: Receiver,
  amount: Type.String({ pattern: '^[0-9]{1,10}\\.[0-9]{2}$' }),
  currency: Type.Literal('BRL'),
  dueDate: Day('dataDeVencimento'),
  settlementDate: Day('The day its first attempt settles (the due date, or the next business day)'),
  description: Nullable(Type.String()),
  cancellableUntil: Nullable(Type.String({ format: 'date-time', description: 'The payer may cancel the attempt under way until then (23:59 of the day before, São Paulo)' })),
  attempts: Type.Array(
    Type.Object({
      position: Type.Integer(),
      type: StringEnum(['AGND', 'NTAG', 'RIFL'] as const, { description: 'AGND, the first; NTAG, a retry after the due date; RIFL, a resend the same day' }),
      date: Day('The day it settles'),
      status: Type.String({ description: "BCB's status of the attempt" }),
      endToEndId: Type.String(),
      rejection: Type.Union([Code, Type.Null()]),
      history: History,
    }),
  ),
  transactionId: Nullable(Type.Integer({ description: 'The Pix out (cash_out) that paid it' })),
  endToEndId: Nullable(Type.String({ description: 'The end-to-end id of the attempt that paid it' })),
  rejection: Type.Union([Code, Type.Null()]),
  cancellation: Type.Union([Cancellation, Type.Null()]),
  history: History,
  createdAt: Timestamp(),
  updatedAt: Timestamp(),
});

export const Page = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: '1-indexed (default 1)' })),
  size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'Page size, at most 100 (default 20)' })),
};

export const AuthorizationList = Type.Object({ data: Type.Array(Authorization), metadata: Metadata });
export const PayerChargeList = Type.Object({ data: Type.Array(PayerCharge), metadata: Metadata });

const MaximumAmount = Type.Optional(
  Type.Number({ description: "The most a charge may ask (at most 2 decimals): only where the recurrence fixes no amount, and not under the receiver's minimum" }),
);
export const ApproveBody = Type.Object({ maximumAmount: MaximumAmount }, { additionalProperties: false, description: 'Optional' });
export const CodeBody = Type.Object(
  { pixCopiaECola: Type.String({ minLength: 1, maxLength: 1024, description: 'The code of Pix Automático the payer scanned' }), maximumAmount: MaximumAmount },
  { additionalProperties: false },
);
export const IdRecParam = Type.Object({ idRec: Type.String({ pattern: '^R[RN][0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$', description: 'idRec' }) });
