import type { OperationExamples } from '../../http/openapi-examples.ts';

/** The examples of Pix Automático's payer side at the root paths and of the sandbox's other receiver, by operationId. */

const ID_REC = 'RN1234567820261124k2MZ4qR7wXa';
const ID_SOLIC = 'SC1234567820261124p9LqW2zX4cV';
const TXID = 'mensalidade202612academia0001';
const E2E = 'E99999999202612100300aB3dE5fG7hJ';
const AT = '2026-11-24T15:30:12.345Z';
const RECEIVED = '2026-11-24T15:30:14.345Z';
const APPROVED = '2026-11-24T18:02:40.118Z';
const METADATA = { page: 1, size: 20, total: 1, totalPages: 1, hasNext: false, hasPrevious: false };
const receiver = { name: 'Assinaturas Sandbox Ltda', document: '11222333000181', ispb: '12345678' };

const authorization = {
  idRec: ID_REC,
  status: 'APPROVED',
  journey: 'JORNADA_1',
  receiver,
  contract: 'PLANO-2026-0042',
  object: 'Plano mensal',
  debtor: { name: 'Maria Souza', document: '52998224725' },
  frequency: 'MENSAL',
  startDate: '2026-12-10',
  endDate: null,
  amount: { fixed: '49.90', receiverMinimum: null, payerMaximum: null, currency: 'BRL' },
  retryPolicy: 'NAO_PERMITE',
  solicitation: { id: ID_SOLIC, status: 'ACEITA', expiresAt: '2026-12-01T15:30:12.345Z' },
  rejection: null,
  cancellation: null,
  history: [
    { status: 'CRIADA', at: AT },
    { status: 'APROVADA', at: APPROVED },
  ],
  createdAt: AT,
  updatedAt: APPROVED,
};
const pending = { ...authorization, status: 'PENDING', journey: null, solicitation: { ...authorization.solicitation, status: 'RECEBIDA' }, history: [{ status: 'CRIADA', at: AT }], updatedAt: RECEIVED };
const cancelled = {
  ...authorization,
  status: 'CANCELLED',
  cancellation: { requestedBy: 'USUARIO_PAGADOR', code: 'SLDB', description: 'Cancelamento solicitado pelo usuário pagador' },
  history: [...authorization.history, { status: 'CANCELADA', at: '2026-12-02T10:00:00.000Z' }],
  updatedAt: '2026-12-02T10:00:00.000Z',
};

const charge = {
  id: 7,
  txid: TXID,
  idRec: ID_REC,
  status: 'SCHEDULED',
  receiver,
  amount: '49.90',
  currency: 'BRL',
  dueDate: '2026-12-10',
  settlementDate: '2026-12-10',
  description: 'Mensalidade de dezembro',
  cancellableUntil: '2026-12-10T02:59:59.999Z',
  attempts: [
    {
      position: 1,
      type: 'AGND',
      date: '2026-12-10',
      status: 'AGENDADA',
      endToEndId: E2E,
      rejection: null,
      history: [
        { status: 'SOLICITADA', at: '2026-12-01T09:00:00.000Z' },
        { status: 'AGENDADA', at: '2026-12-01T09:01:00.000Z' },
      ],
    },
  ],
  transactionId: null,
  endToEndId: null,
  rejection: null,
  cancellation: null,
  history: [
    { status: 'CRIADA', at: '2026-12-01T09:00:00.000Z' },
    { status: 'ATIVA', at: '2026-12-01T09:01:00.000Z' },
  ],
  createdAt: '2026-12-01T09:00:00.000Z',
  updatedAt: '2026-12-01T09:01:00.000Z',
};
const cancelledCharge = {
  ...charge,
  status: 'CANCELLED',
  cancellableUntil: null,
  attempts: [{ ...charge.attempts[0]!, status: 'CANCELADA', history: [...charge.attempts[0]!.history, { status: 'CANCELADA', at: '2026-12-08T20:15:00.000Z' }] }],
  cancellation: { requestedBy: 'USUARIO_PAGADOR', code: 'SLBD', description: 'Cancelamento de agendamento solicitado pelo usuário pagador' },
  history: [...charge.history, { status: 'CANCELADA', at: '2026-12-08T20:15:00.000Z' }],
  updatedAt: '2026-12-08T20:15:00.000Z',
};
const sandboxCharge = { id: 7, txid: TXID, idRec: ID_REC, status: 'CRIADA', dueDate: '2026-12-10', settlementDate: '2026-12-10', amount: '49.90' };

export const PAYER_AUTOMATICO_EXAMPLES: Record<string, OperationExamples> = {
  listAutomaticoAuthorizations: { params: { status: 'PENDING', page: 1, size: 20 }, responses: { 200: { data: [pending], metadata: METADATA } } },
  approveAutomaticoCode: {
    body: {
      pixCopiaECola:
        '00020101021226800014br.gov.bcb.pix2558pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca2552040000530398654040.005802BR' +
        '5915ACADEMIA FORTE6009SAO PAULO62070503***80720014br.gov.bcb.pix2550pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac12000263041A2B',
    },
    responses: { 201: { ...authorization, journey: 'JORNADA_3', solicitation: null } },
    errors: { 422: 'RECURRENCE_NOT_APPROVABLE' },
  },
  getAutomaticoAuthorization: { params: { idRec: ID_REC }, responses: { 200: authorization }, errors: { 404: 'AUTHORIZATION_NOT_FOUND' } },
  approveAutomaticoAuthorization: {
    params: { idRec: ID_REC },
    body: {},
    responses: { 200: authorization },
    errors: { 400: 'MAXIMUM_NOT_ALLOWED', 404: 'AUTHORIZATION_NOT_FOUND', 422: 'AUTHORIZATION_NOT_PENDING' },
  },
  rejectAutomaticoAuthorization: {
    params: { idRec: ID_REC },
    responses: {
      200: {
        ...pending,
        status: 'REJECTED',
        solicitation: { ...pending.solicitation, status: 'REJEITADA' },
        rejection: { code: 'AP14', description: 'O usuário pagador rejeitou a solicitação de confirmação da recorrência' },
        history: [...pending.history, { status: 'REJEITADA', at: APPROVED }],
        updatedAt: APPROVED,
      },
    },
    errors: { 404: 'AUTHORIZATION_NOT_FOUND', 422: 'AUTHORIZATION_NOT_PENDING' },
  },
  cancelAutomaticoAuthorization: { params: { idRec: ID_REC }, responses: { 200: cancelled }, errors: { 404: 'AUTHORIZATION_NOT_FOUND', 422: 'AUTHORIZATION_NOT_ACTIVE' } },
  listAutomaticoCharges: { params: { status: 'SCHEDULED', idRec: ID_REC, page: 1, size: 20 }, responses: { 200: { data: [charge], metadata: METADATA } } },
  getAutomaticoCharge: { params: { id: '7' }, responses: { 200: charge }, errors: { 404: 'RECURRING_CHARGE_NOT_FOUND' } },
  cancelAutomaticoCharge: { params: { id: '7' }, responses: { 200: cancelledCharge }, errors: { 404: 'RECURRING_CHARGE_NOT_FOUND', 422: 'CANCELLATION_TOO_LATE' } },

  sandboxCreateRecurrence: {
    body: { payerAccountId: 2, contract: 'PLANO-2026-0042', object: 'Plano mensal', frequency: 'MENSAL', startDate: '2026-12-10', fixedAmount: '49.90' },
    responses: {
      201: { idRec: ID_REC, status: 'CRIADA', receiver, solicitation: { id: ID_SOLIC, status: 'CRIADA', expiresAt: '2026-12-01T15:30:12.345Z' } },
    },
    errors: { 400: 'RECURRENCE_INVALID' },
  },
  sandboxSendRecurringCharge: {
    params: { idRec: ID_REC },
    body: { dueDate: '2026-12-10', amount: '49.90', description: 'Mensalidade de dezembro' },
    responses: { 201: sandboxCharge },
    errors: { 400: 'RECURRING_CHARGE_INVALID', 404: 'RECURRENCE_NOT_FOUND' },
  },
  sandboxCancelRecurrence: { params: { idRec: ID_REC }, responses: { 200: { idRec: ID_REC, status: 'CANCELADA' } }, errors: { 400: 'RECURRENCE_ENDED', 404: 'RECURRENCE_NOT_FOUND' } },
  sandboxRetryRecurringCharge: {
    params: { txid: TXID },
    body: { date: '2026-12-12' },
    responses: { 200: { ...sandboxCharge, status: 'ATIVA' } },
    errors: { 400: 'RETRY_NOT_ALLOWED', 404: 'RECURRING_CHARGE_NOT_FOUND' },
  },
  sandboxCancelRecurringCharge: {
    params: { txid: TXID },
    responses: { 200: { ...sandboxCharge, status: 'CANCELADA' } },
    errors: { 404: 'RECURRING_CHARGE_NOT_FOUND', 422: 'CANCELLATION_TOO_LATE' },
  },
};
