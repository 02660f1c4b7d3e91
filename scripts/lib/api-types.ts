// The bodies of the operations the API client calls, as openapi.json documents them (request
// bodies with the fields the scripts and tests send; answers in full).

/** A JSON error body: {statusCode, message, error, code}. */
export interface ErrorAnswer {
  statusCode: number;
  message: string;
  error: string;
  code: string;
}

// Operator and sandbox

export interface CreatedAccount {
  accountId: number;
  branch: string;
  accountNumber: string;
  clientId: string;
  clientSecret: string;
}

export interface LinkedCertificateAnswer {
  /** SHA-256 of the DER, lowercase hex. */
  fingerprint: string;
}

export type PixKeyType = 'cpf' | 'cnpj' | 'email' | 'phone' | 'evp';

export interface RegisteredPixKey {
  key: string;
  type: PixKeyType;
}

export interface ExternalKeyInput {
  key: string;
  name: string;
  document: string;
  ispb: string;
  bankName?: string;
  behavior?: 'reject' | 'timeout';
}

export interface RegisteredExternalKey {
  key: string;
  type: string;
  ispb: string;
  behavior: string | null;
}

export interface Payer {
  name: string;
  document: string;
  ispb?: string;
  behavior?: 'reject';
}

export interface IncomingPixInput {
  pixKey: string;
  /** Decimal string with 2 places. */
  amount: string;
  payer: Payer;
  txid?: string;
  receivedAt?: string;
  description?: string;
}

/** A PIX that arrived (incoming, or a charge paid). */
export interface ArrivedPix {
  endToEndId: string;
  transactionId: number;
}

export interface SettleAnswer {
  settled: number;
  failed: number;
}

export interface OpenMedInput {
  endToEndId: string;
  reason: 'FRAUD' | 'OPERATIONAL_FLAW';
  details?: string;
}

// Authentication

export interface TokenAnswer {
  access_token: string;
  token_type: string;
  expires_in: number;
}

// Balances and transfers

export interface BalancesAnswer {
  data: { eventDate: string; balanceAmount: { available: number; blocked: number; overdraft: number } }[];
}

export interface BalanceAnswer {
  grossBalance: number;
  blockedBalance: number;
  netBalance: number;
  consultedAt: string;
}

export interface TransferInput {
  pixKey: string;
  payment: { currency: 'BRL'; amount: number };
  priority?: 'NORM' | 'HIGH';
  creditorDocument?: string;
  description?: string;
  externalId?: string;
  ispbDeny?: string[];
  expiration?: number;
}

export interface TransferAnswer {
  endToEndId: string;
  eventDate: string;
  id: number;
  payment: { amount: number };
  type: 'PENDING' | 'COMPLETED' | 'ERROR';
}

export interface PixKeyLookup {
  key: string;
  type: PixKeyType;
  owner: { name: string; document: string };
  institution: { ispb: string; name: string | null };
}

export interface ListMetadata {
  page: number;
  size: number;
  total: number;
  totalPages: number;
  hasNext: boolean;
  hasPrevious: boolean;
}

export interface TransactionListItem {
  transactionId: string;
  externalId: string | null;
  status: string;
  operationType: string;
  movementType: 'CREDIT' | 'DEBIT';
  originalAmount: number;
  feeAmount: number;
  finalAmount: number;
  endToEndId: string | null;
  createdAt: string;
  processedAt: string | null;
  counterpart: {
    name: string | null;
    document: string | null;
    bank: { bankISPB: string | null; bankName: string | null; bankCode: string | null; accountBranch: string | null; accountNumber: string | null };
  };
}

export interface TransactionList {
  data: TransactionListItem[];
  metadata: ListMetadata;
}

// Charges

export interface ChargeInput {
  calendario: { expiracao?: number };
  devedor?: { cpf?: string; cnpj?: string; nome: string };
  valor: { original: string; modalidadeAlteracao?: number };
  /** One of the account's keys (default: its oldest). */
  chave?: string;
  solicitacaoPagador?: string;
  infoAdicionais?: { nome: string; valor: string }[];
}

export interface Charge {
  calendario: { criacao: string; expiracao: number };
  txid: string;
  revisao: number;
  loc: { id: number; location: string; tipoCob: 'cob' };
  location: string;
  status: 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';
  devedor?: { cpf?: string; cnpj?: string; nome: string };
  valor: { original: string; modalidadeAlteracao: number };
  chave: string;
  solicitacaoPagador?: string;
  infoAdicionais?: { nome: string; valor: string }[];
  pixCopiaECola: string;
  pix?: { endToEndId: string; txid: string; valor: string; horario: string }[];
}

// Refunds and MED

export interface RefundInput {
  valor: string;
  natureza?: 'ORIGINAL' | 'RETIRADA';
  descricao?: string;
}

export interface Refund {
  id: string;
  rtrId: string;
  valor: string;
  natureza: 'ORIGINAL' | 'RETIRADA' | 'MED_OPERACIONAL' | 'MED_FRAUDE';
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
  motivo?: string;
}

// Webhooks

export type EventType = 'cash_in' | 'cash_out' | 'refund_in' | 'refund_out' | 'med_created' | 'med_accepted' | 'med_rejected';

export interface WebhookInput {
  url: string;
  eventType: EventType;
  headers?: { key: string; value: string }[] | Record<string, string>;
}

export interface RegisteredWebhook {
  success: boolean;
  message: string;
  id: number;
  version: number;
}

export interface Webhook {
  id: number;
  type: string;
  url: string;
  headers: Record<string, string>;
  isActive: boolean;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export interface SigningSecret {
  secret: string;
}

/** A request that arrived at the sandbox's webhook inbox, recorded as it came. */
export interface InboxArrival {
  id: number;
  receivedAt: string;
  method: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** The body as text (UTF-8). */
  body: string;
  /** What the inbox answered: 200, or what a fault said. */
  status: number;
}

/** The test clock (GET /sandbox/clock, and what moving it answers). */
export interface ClockView {
  now: string;
  offsetSeconds: number;
}

export interface InboxArrivals {
  /** Newest first. */
  data: InboxArrival[];
}

export interface WebhookLog {
  webhookLogId: number;
  eventType: string;
  transactionId: number | null;
  url: string;
  webhookId: string;
  attempt: number;
  statusCode: number | null;
  success: boolean;
  durationMs: number;
  error: string | null;
  isResend: boolean;
  createdAt: string;
}

/** POST /api/resend-webhook: the first delivery's fields, then every delivery made. */
export interface ResendAnswer {
  message: string;
  webhookLogId: number;
  sentAt: string;
  statusCode: number;
  webhookId: string;
  deliveries: { url: string; webhookLogId: number; sentAt: string; statusCode: number; success: boolean; error: string | null }[];
}

export interface WebhookLogList {
  data: WebhookLog[];
  metadata: ListMetadata;
}

/** POST /sandbox/automatico/recurrences: the terms another institution's receiver asks a payer here to approve. */
export interface SandboxRecurrenceInput {
  payerAccountId: number;
  contract: string;
  object?: string;
  frequency: 'SEMANAL' | 'MENSAL' | 'TRIMESTRAL' | 'SEMESTRAL' | 'ANUAL';
  startDate: string;
  endDate?: string;
  fixedAmount?: string;
  minimumAmount?: string;
  retryPolicy?: 'NAO_PERMITE' | 'PERMITE_3R_7D';
  expiresAt?: string;
  receiver?: { name?: string; document?: string; ispb?: string };
}

export interface SandboxRecurrence {
  idRec: string;
  status: string;
  receiver: { name: string; document: string; ispb: string };
  solicitation: { id: string; status: string; expiresAt: string };
}

export interface SandboxRecurringCharge {
  id: number;
  txid: string;
  idRec: string;
  status: string;
  dueDate: string;
  settlementDate: string;
  amount: string;
}
