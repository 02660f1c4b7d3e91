/**
 * Request and answer examples of every operation, put into the OpenAPI document when it is
 * built (so /docs shows them and openapi.json carries them). They live here, by operationId,
 * rather than in each route's schema, so that one file reads as a tour of the API. A test
 * validates every example against its operation's schemas and requires one for every operation,
 * parameter and answer: an example cannot drift from what the service accepts and sends.
 */
import { STATUS_CODES } from 'node:http';
import { BCB_EXAMPLES } from '../dialects/bcb/examples.ts';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES, type ProblemName } from '../dialects/bcb/problems.ts';
import { ERROR_CODES, type ErrorCode } from './error-codes.ts';
import { CONTROLS_EXAMPLES } from '../modules/controls/examples.ts';
import { LISTENER_EXAMPLES } from '../modules/webhooks/listener-examples.ts';
import { PAYER_AUTOMATICO_EXAMPLES } from '../modules/recurrences/payer-examples.ts';
import { examplePage } from './example-page.ts';

export interface OperationExamples {
  /** The body of the request. */
  body?: unknown;
  /** The body by media type, where one operation takes several forms (`body` for the others). */
  bodies?: Record<string, unknown>;
  /** Path, query and header parameters, by name. */
  params?: Record<string, unknown>;
  /** Answers by status; an error status without one gets the default error of its status. */
  responses?: Record<number, unknown>;
  /** Error codes this operation answers with, by status, when not the status's default. */
  errors?: Record<number, ErrorCode>;
  /** /v2: BCB's problem types this operation answers with, by status, when not the status's general one. */
  problems?: Record<number, ProblemName>;
}

const E2E = 'E99999999202611241530aB3dE5fG7hJ';
const E2E_IN = 'E60746948202611241522xYz0aBc1dEf';
const RTR = 'D99999999202611241535kL9mN8pQ7rS';
const TXID = 'pedido20261124000000000001';
const EVP = 'c1a9e94e-4af5-4e52-b8e5-4eb266ee637c';
const AT = '2026-11-24T15:30:12.345Z';
const ADDRESS = { logradouro: 'Rua Augusta, 1500', cidade: 'São Paulo', uf: 'SP', cep: '01304001' };
const LATER = '2026-11-24T15:31:02.117Z';
const BR_CODE =
  '00020101021226790014br.gov.bcb.pix0136c1a9e94e-4af5-4e52-b8e5-4eb266ee637c0217Encomenda de paes5204000053039865406150.00' +
  '5802BR5923Padaria Pao Quente Ltda6009SAO PAULO62300526pedido2026112400000000000163041D3A';
const CERT_HEADER = '-----BEGIN%20CERTIFICATE-----%0AMIIBjTCCATOgAwIBAgIU...%0A-----END%20CERTIFICATE-----%0A';
const IDEMPOTENCY_KEY = '6f1c2b9e-3d4a-4b8f-9a51-2c7e0d9b8a10';
const METADATA = { page: 1, size: 20, total: 1, totalPages: 1, hasNext: false, hasPrevious: false };

const balance = { available: 94.5, blocked: 35.5, overdraft: 0 };
const transfer = { endToEndId: E2E, eventDate: AT, id: 4, payment: { amount: 35.5 }, type: 'PENDING' };
const listItem = {
  transactionId: '4',
  externalId: 'nota-fiscal-1234',
  status: 'Confirmado',
  operationType: 'Pix out',
  movementType: 'DEBIT',
  originalAmount: 35.5,
  feeAmount: 0,
  finalAmount: 35.5,
  endToEndId: E2E,
  createdAt: AT,
  processedAt: LATER,
  counterpart: {
    name: 'Moinho Fornecedor SA',
    document: '11.222.333/****-**',
    bank: { bankISPB: '60746948', bankName: 'Bradesco', bankCode: '237', accountBranch: '0001', accountNumber: '12345-6' },
  },
};
const statusView = {
  id: '4',
  externalId: 'nota-fiscal-1234',
  type: 'WITHDRAW',
  status: 'CONFIRMED',
  originalAmount: '35.50',
  feeAmount: '0.00',
  finalAmount: '35.50',
  e2eId: E2E,
  counterpartName: 'Moinho Fornecedor SA',
  counterpartDocument: '11.222.333/****-**',
  counterpartAccountBankCode: '237',
  counterpartAccountBranch: '0001',
  counterpartAccountNumber: '12345-6',
  counterpartAccountIspb: '60746948',
  counterpartAccountBankName: 'Bradesco',
  createdAt: AT,
  updatedAt: LATER,
  processedAt: LATER,
  errorReason: null,
};
const chargeBody = {
  calendario: { expiracao: 3600 },
  devedor: { cpf: '52998224725', nome: 'Maria Cliente' },
  valor: { original: '150.00' },
  chave: EVP,
  solicitacaoPagador: 'Encomenda de paes',
  infoAdicionais: [{ nome: 'Pedido', valor: '1234' }],
};
const charge = {
  calendario: { criacao: AT, expiracao: 3600 },
  txid: TXID,
  revisao: 0,
  loc: { id: 7, location: BR_CODE, tipoCob: 'cob' },
  location: BR_CODE,
  status: 'ATIVA',
  devedor: { cpf: '52998224725', nome: 'Maria Cliente' },
  valor: { original: '150.00', modalidadeAlteracao: 0 },
  chave: EVP,
  solicitacaoPagador: 'Encomenda de paes',
  infoAdicionais: [{ nome: 'Pedido', valor: '1234' }],
  pixCopiaECola: BR_CODE,
};
const refund = {
  id: 'devolucao1',
  rtrId: RTR,
  valor: '20.00',
  natureza: 'ORIGINAL',
  descricao: 'Um pao a menos',
  horario: { solicitacao: AT },
  status: 'EM_PROCESSAMENTO',
};
const med = {
  id: 1,
  endToEndId: E2E_IN,
  transactionId: 2,
  amount: '70.00',
  currency: 'BRL',
  reason: 'FRAUD',
  details: 'The payer reports a scam',
  status: 'ACCEPTED',
  createdAt: AT,
  closedAt: LATER,
  refund: { id: 'MED-1', rtrId: RTR, natureza: 'MED_FRAUDE', status: 'EM_PROCESSAMENTO' },
};
const webhook = {
  id: 3,
  type: 'cash_in',
  url: 'https://erp.example.com/pix/cash-in',
  headers: { 'x-api-key': 'erp-7d1f' },
  isActive: true,
  version: 1,
  createdAt: AT,
  updatedAt: AT,
};
const delivered = { message: 'Webhook resent', webhookLogId: 42, sentAt: AT, statusCode: 200, webhookId: 'msg_2eb3b257bf674921ae0e5e86df117c71' };
const pair = { endToEndId: E2E_IN, transactionId: 2 };
const KID = 'PCl_Gd4WqK1vQd5n0m3sR8tY2uX7zA9bC6eF1hJ4kL0';
const signingKey = { kid: KID, algorithm: 'EdDSA', status: 'signing', createdAt: AT, retiredAt: null };
const headers = { 'x-ssl-client-cert': CERT_HEADER };
const token: OperationExamples = {
  params: headers,
  body: { clientId: 'pix_z7ci1qw0hktup9cizyel0ilz', clientSecret: 'sk_4Qm9...' },
  bodies: { 'application/x-www-form-urlencoded': { grant_type: 'client_credentials', scope: 'cob.write cob.read' } },
  responses: {
    200: { access_token: 'eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJl', token_type: 'Bearer', expires_in: 1800, scope: 'cob.write cob.read' },
    201: { access_token: 'eyJhbGciOiJFZERTQSIsImtpZCI6Ii4uLiJ9.eyJzdWIiOiIyIn0.c2lnbmF0dXJl', token_type: 'Bearer', expires_in: 1800 },
  },
  errors: { 400: 'CERTIFICATE_REQUIRED', 401: 'INVALID_CLIENT', 403: 'CERTIFICATE_NOT_LINKED', 429: 'TOO_MANY_FAILED_ATTEMPTS' },
};

export const OPERATION_EXAMPLES: Record<string, OperationExamples> = {
  health: { responses: { 200: { status: 'ok' } } },
  ready: { responses: { 200: { status: 'ready', migration: 5 } }, errors: { 503: 'MIGRATIONS_PENDING' } },
  metrics: {
    responses: {
      200:
        '# HELP pix_transfers_total Transfers accepted (created), and movements settled or failed by settlement (transfers and refunds)\n' +
        '# TYPE pix_transfers_total counter\npix_transfers_total{stage="created"} 1523\npix_transfers_total{stage="settled"} 1519\n',
    },
  },
  adminUpdateAccount: {
    params: { accountId: '2' },
    body: { address: ADDRESS, scopes: ['cob.write', 'cob.read', 'pix.read'] },
    responses: { 200: { accountId: 2, clientId: 'pix_z7ci1qw0hktup9cizyel0ilz', scopes: ['cob.write', 'cob.read', 'pix.read'], address: ADDRESS } },
    errors: { 404: 'ACCOUNT_NOT_FOUND' },
  },
  createToken: token,
  createOAuthToken: token,
  getBalances: { responses: { 200: { data: [{ eventDate: AT, balanceAmount: balance }] } } },
  getBalance: { responses: { 200: { grossBalance: 130, blockedBalance: 35.5, netBalance: 94.5, consultedAt: AT } } },
  createPixTransfer: {
    params: { 'x-idempotency-key': IDEMPOTENCY_KEY },
    body: {
      pixKey: 'fornecedor@example.com',
      priority: 'NORM',
      description: 'Farinha',
      payment: { currency: 'BRL', amount: 35.5 },
      externalId: 'nota-fiscal-1234',
    },
    responses: { 201: transfer },
    errors: { 400: 'INVALID_AMOUNT', 409: 'IDEMPOTENCY_IN_FLIGHT', 422: 'INSUFFICIENT_BALANCE', 429: 'DIRECTORY_RATE_LIMITED' },
  },
  getPixKey: {
    params: { key: 'fornecedor@example.com' },
    responses: {
      200: {
        key: 'fornecedor@example.com',
        type: 'email',
        owner: { name: 'Moinho Fornecedor SA', document: '11.222.333/****-**' },
        institution: { ispb: '60746948', name: 'Bradesco' },
      },
    },
    errors: { 400: 'INVALID_PIX_KEY', 404: 'PIX_KEY_NOT_FOUND', 429: 'DIRECTORY_RATE_LIMITED' },
  },
  listTransactions: {
    params: { startDate: '2026-11-01', endDate: '2026-11-24', status: 'Confirmado', type: 'WITHDRAW', page: 1, size: 20 },
    responses: { 200: { data: [listItem], metadata: METADATA } },
    errors: { 400: 'INTERVAL_TOO_LONG' },
  },
  getTransaction: { params: { id: 'nota-fiscal-1234' }, responses: { 200: statusView }, errors: { 404: 'TRANSACTION_NOT_FOUND' } },
  listTransactionsByPixKey: {
    params: { pixKey: 'fornecedor@example.com', startDate: '2026-11-01', endDate: '2026-11-24', size: 100 },
    responses: { 200: { data: [listItem], metadata: { ...METADATA, size: 100 } } },
    errors: { 400: 'INVALID_PIX_KEY' },
  },
  getTransactionByPixKey: {
    params: { pixKey: 'fornecedor@example.com', identifier: E2E },
    responses: { 200: listItem },
    errors: { 400: 'INVALID_PIX_KEY', 404: 'TRANSACTION_NOT_FOUND' },
  },
  createCharge: {
    params: { txid: TXID },
    body: chargeBody,
    responses: { 201: charge },
    errors: { 400: 'INVALID_CPF', 409: 'TXID_TAKEN', 422: 'PIX_KEY_NOT_FOUND' },
  },
  getCharge: {
    params: { txid: TXID },
    responses: { 200: { ...charge, status: 'CONCLUIDA', pix: [{ endToEndId: E2E_IN, txid: TXID, valor: '150.00', horario: LATER }] } },
    errors: { 404: 'CHARGE_NOT_FOUND' },
  },
  reviseCharge: {
    params: { txid: TXID },
    body: { valor: { original: '160.00' }, solicitacaoPagador: 'Encomenda de paes e bolos' },
    responses: { 200: { ...charge, revisao: 1, valor: { original: '160.00', modalidadeAlteracao: 0 }, solicitacaoPagador: 'Encomenda de paes e bolos' } },
    errors: { 400: 'EMPTY_REVISION', 404: 'CHARGE_NOT_FOUND', 422: 'CHARGE_NOT_ACTIVE' },
  },
  createChargeWithGeneratedTxid: { body: chargeBody, responses: { 201: charge }, errors: { 400: 'INVALID_CPF', 422: 'PIX_KEY_NOT_FOUND' } },
  listCharges: {
    params: { inicio: '2026-11-01T00:00:00Z', fim: '2026-11-24T23:59:59Z', status: 'ATIVA', 'paginacao.paginaAtual': 0, 'paginacao.itensPorPagina': 100 },
    responses: { 200: examplePage({ inicio: '2026-11-01T00:00:00.000Z', fim: '2026-11-24T23:59:59.000Z', status: 'ATIVA' }, 'cobs', [charge]) },
    errors: { 400: 'INTERVAL_TOO_LONG' },
  },
  getChargeQrCode: {
    params: { txid: TXID, format: 'svg' },
    responses: { 200: '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 53 53" shape-rendering="crispEdges">...</svg>' },
    errors: { 404: 'CHARGE_NOT_FOUND' },
  },
  requestRefund: {
    params: { e2eid: E2E_IN, id: 'devolucao1' },
    body: { valor: '20.00', natureza: 'ORIGINAL', descricao: 'Um pao a menos' },
    responses: { 201: refund, 200: { ...refund, status: 'DEVOLVIDO', horario: { solicitacao: AT, liquidacao: LATER } } },
    errors: { 400: 'REFUND_EXCEEDS_ORIGINAL', 404: 'TRANSACTION_NOT_FOUND', 409: 'REFUND_ID_REUSED', 422: 'REFUND_PERIOD_EXPIRED' },
  },
  getRefund: {
    params: { e2eid: E2E_IN, id: 'devolucao1' },
    responses: { 200: { ...refund, status: 'DEVOLVIDO', horario: { solicitacao: AT, liquidacao: LATER } } },
    errors: { 404: 'REFUND_NOT_FOUND' },
  },
  listMeds: {
    params: { status: 'ACCEPTED', startDate: '2026-11-01', endDate: '2026-11-24', page: 1, size: 20 },
    responses: { 200: { data: [med], metadata: METADATA } },
    errors: { 400: 'INTERVAL_TOO_LONG' },
  },
  getMed: { params: { id: '1' }, responses: { 200: med }, errors: { 404: 'MED_NOT_FOUND' } },
  registerWebhook: {
    body: { url: 'https://erp.example.com/pix/cash-in', eventType: 'cash_in', headers: [{ key: 'x-api-key', value: 'erp-7d1f' }] },
    responses: { 201: { success: true, message: 'Webhook registered', id: 3, version: 1 } },
    errors: { 400: 'INVALID_WEBHOOK_URL', 404: 'ACCOUNT_NOT_FOUND' },
  },
  listWebhooks: { responses: { 200: { accountId: 2, webhooks: [webhook], total: 1 } }, errors: { 404: 'ACCOUNT_NOT_FOUND' } },
  updateWebhook: {
    params: { id: '3' },
    body: { isActive: false },
    responses: { 200: { ...webhook, isActive: false, updatedAt: LATER } },
    errors: { 400: 'TOO_MANY_WEBHOOKS', 404: 'WEBHOOK_NOT_FOUND' },
  },
  deleteWebhook: { params: { id: '3' }, responses: {}, errors: { 404: 'WEBHOOK_NOT_FOUND' } },
  getWebhookSigningSecret: { responses: { 200: { secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' } }, errors: { 404: 'ACCOUNT_NOT_FOUND' } },
  rotateWebhookSigningSecret: { responses: { 200: { secret: 'whsec_3bD1xk0p5Yc8Jm2QvN7tR4sWq9Le6HaZ' } }, errors: { 404: 'ACCOUNT_NOT_FOUND' } },
  listWebhookLogs: {
    params: { eventType: 'cash_in', success: false, page: 1, size: 20 },
    responses: {
      200: {
        data: [
          {
            webhookLogId: 41,
            eventType: 'cash_in',
            transactionId: 2,
            url: 'https://erp.example.com/pix/cash-in',
            webhookId: 'msg_e0a54ba2bd45437890dda52e313edbcf',
            attempt: 1,
            statusCode: 503,
            success: false,
            durationMs: 84,
            error: 'HTTP 503',
            isResend: false,
            createdAt: AT,
          },
        ],
        metadata: METADATA,
      },
    },
  },
  resendWebhook: {
    params: { transactionIdentifier: E2E_IN },
    body: { url: 'https://erp.example.com/pix/replay' },
    responses: {
      200: { ...delivered, deliveries: [{ url: 'https://erp.example.com/pix/replay', webhookLogId: 42, sentAt: AT, statusCode: 200, success: true, error: null }] },
    },
    errors: { 400: 'NO_WEBHOOK_URL', 404: 'TRANSACTION_NOT_FOUND', 429: 'RATE_LIMITED' },
  },
  adminCreateAccount: {
    body: { name: 'Padaria Pao Quente Ltda', document: '11.222.333/0001-81', address: ADDRESS },
    responses: { 201: { accountId: 2, branch: '0001', accountNumber: '000002-7', clientId: 'pix_z7ci1qw0hktup9cizyel0ilz', clientSecret: 'sk_4Qm9...' } },
    errors: { 400: 'INVALID_ADDRESS' },
  },
  adminLinkCertificate: {
    params: { accountId: '2' },
    body: { pem: '-----BEGIN CERTIFICATE-----\nMIIBjTCCATOgAwIBAgIU...\n-----END CERTIFICATE-----\n' },
    responses: { 201: { fingerprint: '3f2a9c0d5b7e1f4a8c6d2e0b9a7f5c3e1d8b6a4f2c0e9d7b5a3f1e8c6d4b2a0f' } },
    errors: { 400: 'INVALID_CERTIFICATE', 404: 'ACCOUNT_NOT_FOUND', 409: 'CERTIFICATE_LINKED_ELSEWHERE' },
  },
  adminUnlinkCertificate: {
    params: { accountId: '2', fingerprint: '3f2a9c0d5b7e1f4a8c6d2e0b9a7f5c3e1d8b6a4f2c0e9d7b5a3f1e8c6d4b2a0f' },
    responses: {},
    errors: { 404: 'CERTIFICATE_NOT_FOUND' },
  },
  adminRegisterPixKey: {
    params: { accountId: '2' },
    body: { type: 'evp' },
    responses: { 201: { key: EVP, type: 'evp' } },
    errors: { 400: 'INVALID_PIX_KEY', 404: 'ACCOUNT_NOT_FOUND', 409: 'PIX_KEY_EXISTS', 422: 'PIX_KEY_LIMIT' },
  },
  adminRotateClientSecret: {
    params: { accountId: '2' },
    responses: { 201: { clientId: 'pix_z7ci1qw0hktup9cizyel0ilz', clientSecret: 'sk_8Zt2...' } },
    errors: { 404: 'ACCOUNT_NOT_FOUND' },
  },
  adminListSigningKeys: {
    responses: { 200: { data: [signingKey, { ...signingKey, kid: 'x3Lm8Qp2Rt6Vw0Yz4Bc8Df1Gh5Jk9Mn3Pq7St1Uv5Xy', status: 'verifying', createdAt: '2026-10-01T12:00:00.000Z' }] } },
  },
  adminRotateSigningKey: { responses: { 201: signingKey } },
  adminRetireSigningKey: {
    params: { kid: 'x3Lm8Qp2Rt6Vw0Yz4Bc8Df1Gh5Jk9Mn3Pq7St1Uv5Xy' },
    responses: { 200: { kid: 'x3Lm8Qp2Rt6Vw0Yz4Bc8Df1Gh5Jk9Mn3Pq7St1Uv5Xy', algorithm: 'EdDSA', status: 'retired', createdAt: '2026-10-01T12:00:00.000Z', retiredAt: LATER } },
    errors: { 404: 'SIGNING_KEY_NOT_FOUND', 409: 'SIGNING_KEY_LAST_ACTIVE' },
  },
  sandboxRegisterExternalKey: {
    body: { key: 'fornecedor@example.com', name: 'Moinho Fornecedor SA', document: '11222333000181', ispb: '60746948', bankName: 'Bradesco' },
    responses: { 201: { key: 'fornecedor@example.com', type: 'email', ispb: '60746948', behavior: null } },
    errors: { 400: 'OWN_ISPB', 409: 'PIX_KEY_EXISTS' },
  },
  sandboxIncomingPix: {
    body: { pixKey: EVP, amount: '100.00', payer: { name: 'Joao Pagador', document: '52998224725' } },
    responses: { 201: pair },
    errors: { 404: 'PIX_KEY_NOT_FOUND', 422: 'WRONG_AMOUNT' },
  },
  sandboxIncomingRefund: {
    body: { endToEndId: E2E, amount: '5.00' },
    responses: { 201: { endToEndId: RTR, transactionId: 9 } },
    errors: { 404: 'TRANSFER_NOT_FOUND', 422: 'REFUND_EXCEEDS_ORIGINAL' },
  },
  sandboxSettle: { responses: { 200: { settled: 3, failed: 1 } } },
  sandboxPayCharge: {
    params: { txid: TXID },
    body: { payer: { name: 'Maria Cliente', document: '52998224725' } },
    responses: { 201: pair },
    errors: { 404: 'CHARGE_NOT_FOUND', 422: 'CHARGE_NOT_ACTIVE' },
  },
  sandboxPayerPay: {
    body: {
      pixCopiaECola:
        '00020101021226750014br.gov.bcb.pix2553127.0.0.1:8080/qr/v2/2353c790eefb11eaadc10242ac1200025204000053039865802BR' +
        '5923Padaria Pao Quente Ltda6009SAO PAULO62070503***63049C64',
      payer: { name: 'Maria Cliente', document: '52998224725' },
    },
    responses: { 201: { ...pair, amount: '150.00', txid: TXID } },
    errors: { 404: 'CHARGE_NOT_FOUND', 422: 'JWS_INVALID' },
  },
  sandboxAnswerSolicitation: {
    params: { idSolicRec: 'SC9999999920261124abcdefghijk' },
    body: { decision: 'reject', reason: 'AP14' },
    responses: {
      200: {
        idSolicRec: 'SC9999999920261124abcdefghijk',
        status: 'REJEITADA',
        atualizacao: [
          { status: 'CRIADA', data: AT },
          { status: 'ENVIADA', data: '2026-11-24T15:30:13.345Z' },
          { status: 'RECEBIDA', data: '2026-11-24T15:30:14.345Z' },
          { status: 'REJEITADA', data: LATER },
        ],
      },
    },
    errors: { 404: 'SOLICITATION_NOT_FOUND', 422: 'SOLICITATION_NOT_ANSWERABLE' },
  },
  sandboxOpenMed: {
    body: { endToEndId: E2E_IN, reason: 'FRAUD', details: 'The payer reports a scam' },
    responses: { 201: { medId: 1 } },
    errors: { 404: 'TRANSACTION_NOT_FOUND', 409: 'MED_ALREADY_OPEN', 422: 'NOTHING_TO_DISPUTE' },
  },
  sandboxAcceptMed: { params: { medId: '1' }, responses: { 200: med }, errors: { 404: 'MED_NOT_FOUND', 409: 'MED_CLOSED' } },
  sandboxRejectMed: {
    params: { medId: '1' },
    responses: { 200: { ...med, status: 'REJECTED', refund: null } },
    errors: { 404: 'MED_NOT_FOUND', 409: 'MED_CLOSED' },
  },
  ...CONTROLS_EXAMPLES,
  ...LISTENER_EXAMPLES,
  ...PAYER_AUTOMATICO_EXAMPLES,
};

/** The code an error status answers with when an operation names none. */
const DEFAULT_ERRORS: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'TOKEN_INVALID',
  403: 'CERTIFICATE_NOT_LINKED',
  404: 'ROUTE_NOT_FOUND',
  409: 'IDEMPOTENCY_IN_FLIGHT',
  413: 'BODY_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'INSUFFICIENT_BALANCE',
  429: 'RATE_LIMITED',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

const MESSAGES: Partial<Record<ErrorCode, string>> = {
  VALIDATION_FAILED: 'body: payment.amount must be number',
  TOKEN_INVALID: 'Access token expired',
};

/** BCB's general problem type of a status, for a /v2 operation that names none. */
const DEFAULT_PROBLEMS: Record<number, ProblemName> = {
  400: 'RequisicaoInvalida',
  401: 'AcessoNegado',
  403: 'AcessoNegado',
  404: 'NaoEncontrado',
  410: 'PermanentementeRemovido',
  500: 'ErroInternoDoServidor',
  503: 'ServicoIndisponivel',
};

export function problemExample(status: number, name: ProblemName) {
  return {
    type: PROBLEM_TYPE_BASE + name,
    title: PROBLEM_TYPES[name].title,
    status,
    detail: status === 400 ? 'A requisição não respeita o schema (body): cada violação está em violacoes.' : PROBLEM_TYPES[name].title,
    correlationId: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
    ...(status === 400 ? { violacoes: [{ razao: 'deve ser uma string com 2 casas decimais', propriedade: 'valor.original', valor: '10' }] } : {}),
  };
}

export function errorExample(status: number, code: ErrorCode) {
  return { statusCode: status, message: MESSAGES[code] ?? ERROR_CODES[code].description, error: STATUS_CODES[status] ?? 'Error', code };
}

interface Operation {
  operationId?: string;
  parameters?: { name: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses?: Record<string, { content?: Record<string, { example?: unknown }> }>;
}

/** Puts the examples into a built OpenAPI document (@fastify/swagger's transformObject). */
export function withExamples<T extends object>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, unknown> | undefined> }).paths ?? {};
  for (const methods of Object.values(paths)) {
    for (const operation of Object.values(methods ?? {}) as Operation[]) {
      const examples = operation.operationId ? (OPERATION_EXAMPLES[operation.operationId] ?? BCB_EXAMPLES[operation.operationId]) : undefined;
      if (!examples) continue;
      for (const parameter of operation.parameters ?? []) {
        if (examples.params && Object.hasOwn(examples.params, parameter.name)) parameter.example = examples.params[parameter.name];
      }
      if (examples.body !== undefined) {
        for (const media of Object.values(operation.requestBody?.content ?? {})) media.example = examples.body;
      }
      for (const [type, body] of Object.entries(examples.bodies ?? {})) {
        const media = operation.requestBody?.content[type];
        if (media) media.example = body;
      }
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const code = Number(status);
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (type === 'image/png') continue;
          const answer =
            examples.responses?.[code] ??
            (code < 400
              ? undefined
              : type === 'application/problem+json'
                ? problemExample(code, examples.problems?.[code] ?? DEFAULT_PROBLEMS[code] ?? 'RequisicaoInvalida')
                : errorExample(code, examples.errors?.[code] ?? DEFAULT_ERRORS[code] ?? 'INVALID_REQUEST'));
          if (answer !== undefined) media.example = answer;
        }
      }
    }
  }
  return document;
}
