import type { ColumnType, Generated } from 'kysely';

/** Kysely's view of the tables in migrations/. int8 columns are bigint on both drivers. */
type Id = ColumnType<bigint, bigint | number | string, never>;
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;
/** A reference set after the row is written. */
type LaterId = ColumnType<bigint | null, bigint | null | undefined, bigint | null>;

export interface AccountsTable {
  id: Generated<bigint>;
  name: string;
  document: string;
  document_type: 'CPF' | 'CNPJ';
  branch: string;
  account_number: string;
  client_id: string;
  client_secret_hash: string;
  /** Raised by every rotation of the secret; tokens of a lower version are revoked. */
  client_secret_version: ColumnType<number, number | undefined, number>;
  webhook_secret: string;
  webhook_secret_previous: string | null;
  webhook_secret_rotated_at: Timestamp | null;
  status: ColumnType<string, string | undefined, string>;
  /** The OAuth scopes an operator limited the client to; null: all of them. */
  scopes: ColumnType<string[] | null, string[] | null | undefined, string[] | null>;
  /** The holder's address (the recebedor's in BCB's cobv); null: none given. */
  address: ColumnType<AccountAddress | null, AccountAddress | null | undefined, AccountAddress | null>;
  created_at: CreatedAt;
}

/** An address as BCB's DadosRecebedor writes it. */
export interface AccountAddress {
  logradouro: string;
  cidade: string;
  uf: string;
  cep: string;
}

export interface AccountCertificatesTable {
  id: Generated<bigint>;
  account_id: Id;
  fingerprint: string;
  subject: string;
  not_before: Timestamp;
  not_after: Timestamp;
  pem: string;
  created_at: CreatedAt;
}

export interface SigningKeysTable {
  kid: string;
  algorithm: string;
  /** Only in rows written before private keys were sealed; cleared on the first start after. */
  private_jwk: ColumnType<Record<string, unknown> | null, string | null | undefined, string | null>;
  /** The private JWK under AES-256-GCM (key-encryption.ts); null once retired. */
  private_key_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  public_jwk: Json<Record<string, unknown>>;
  created_at: CreatedAt;
  retired_at: Timestamp | null;
}

/** The sandbox's root CA for payload signing: one row, created on first start. */
export interface PayloadSigningAuthorityTable {
  id: ColumnType<number, number | undefined, never>;
  /** Base64 DER, as in `x5c`. */
  certificate: string;
  private_key_sealed: string;
  created_at: CreatedAt;
}

/** The certificates (with their keys) that sign payload locations' JWS, per host. */
export interface PayloadSigningKeysTable {
  kid: string;
  host: string;
  algorithm: string;
  /** Base64 DER of the leaf, as in `x5c`. */
  certificate: string;
  private_key_sealed: string;
  not_after: Timestamp;
  created_at: CreatedAt;
}

export interface DictKeysTable {
  key: string;
  key_type: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'EVP';
  account_id: Id | null;
  owner_name: string;
  owner_document: string;
  ispb: string;
  bank_name: string | null;
  branch: string | null;
  account_number: string | null;
  behavior: 'reject' | 'timeout' | null;
  created_at: CreatedAt;
}

export interface LedgerAccountsTable {
  id: Generated<bigint>;
  account_id: Id | null;
  code: string;
  shard: ColumnType<number, number | undefined, never>;
  balance: ColumnType<bigint, bigint | undefined, bigint>;
  allow_negative: ColumnType<boolean, boolean | undefined, never>;
  created_at: CreatedAt;
}

/** A view over postings: one row per ledger transaction. */
export interface LedgerTransactionsTable {
  id: ColumnType<bigint, never, never>;
  kind: ColumnType<string, never, never>;
  reference: ColumnType<string | null, never, never>;
  created_at: ColumnType<Date, never, never>;
}

export interface PostingsTable {
  id: Generated<bigint>;
  ledger_tx_id: Id;
  kind: string;
  reference: string | null;
  debit_account_id: Id;
  credit_account_id: Id;
  amount_centavos: bigint;
  created_at: CreatedAt;
}

export interface TransactionsTable {
  id: Generated<bigint>;
  account_id: Id;
  type: 'PAYMENT' | 'WITHDRAW' | 'REFUND_IN' | 'REFUND_OUT';
  status: 'PENDING' | 'CONFIRMED' | 'ERROR';
  amount_centavos: bigint;
  fee_centavos: ColumnType<bigint, bigint | undefined, bigint>;
  external_id: string | null;
  end_to_end_id: string | null;
  idempotency_key: string | null;
  pix_key: string | null;
  txid: string | null;
  description: string | null;
  priority: 'HIGH' | 'NORM' | null;
  expires_at: Timestamp | null;
  ispb_deny: string[] | null;
  error_reason: string | null;
  original_transaction_id: Id | null;
  counterpart_name: string | null;
  counterpart_document: string | null;
  counterpart_ispb: string | null;
  counterpart_bank_name: string | null;
  counterpart_bank_code: string | null;
  counterpart_branch: string | null;
  counterpart_account: string | null;
  counterpart_account_id: Id | null;
  hold_ledger_account_id: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  /** Sandbox: how the payer's institution answers a refund of this received PIX. */
  counterpart_behavior: ColumnType<'reject' | null, 'reject' | null | undefined, 'reject' | null>;
  /** BCB's componentesValor of a received Pix (centavos as decimal strings); null for a plain one. */
  value_components: ColumnType<Record<string, string> | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  processed_at: Timestamp | null;
}

export interface IdempotencyKeysTable {
  account_id: Id;
  key: string;
  request_hash: string;
  status: 'IN_FLIGHT' | 'DONE';
  /** The stored answer (transfers/views.ts builds it): the transfer, as it was when accepted. */
  transaction_id: Id;
  end_to_end_id: string;
  amount_centavos: bigint;
  transaction_status: TransactionsTable['status'];
  /** When the transfer was accepted: the answer's eventDate. */
  created_at: CreatedAt;
  expires_at: Timestamp;
}

export interface OutboxTable {
  id: Generated<bigint>;
  account_id: Id;
  event_type: string;
  transaction_id: Id | null;
  payload: Json<{ type: string; data: Record<string, unknown> }>;
  message_id: ColumnType<string, string | undefined, never>;
  created_at: CreatedAt;
  dispatched_at: Timestamp | null;
  /** What a notification of no transaction is about: `rec:{idRec}`, `cobr:{id}`. */
  subject: ColumnType<string | null, string | null | undefined, string | null>;
}

export type ChargeStatus = 'ATIVA' | 'CONCLUIDA' | 'REMOVIDA_PELO_USUARIO_RECEBEDOR' | 'REMOVIDA_PELO_PSP';

export interface ChargesTable {
  id: Generated<bigint>;
  account_id: Id;
  txid: string;
  revisao: ColumnType<number, number | undefined, number>;
  status: ChargeStatus;
  tipo_cob: ColumnType<TipoCob, TipoCob | undefined, TipoCob>;
  /** Immediate charges only (cob); null for a cobv. */
  expiracao_seconds: number | null;
  amount_centavos: bigint;
  modalidade_alteracao: ColumnType<number, number | undefined, number>;
  chave: string;
  devedor: Json<{ cpf?: string; cnpj?: string; nome: string }> | null;
  solicitacao_pagador: string | null;
  info_adicionais: Json<{ nome: string; valor: string }[]> | null;
  br_code: string;
  paid_transaction_id: LaterId;
  loc_id: LaterId;
  pix_copia_e_cola: string | null;
  retirada: Json<Record<string, unknown>> | null;
  /** cobv: the due date, 'YYYY-MM-DD' (a day in America/Sao_Paulo). */
  due_date: ColumnType<string | null, string | null | undefined, string | null>;
  validade_apos_vencimento: number | null;
  /** cobv: the last day it can be paid ('YYYY-MM-DD', São Paulo). */
  last_payable_day: ColumnType<string | null, string | null | undefined, string | null>;
  valor_rules: Json<Record<string, unknown>> | null;
  recebedor: Json<Record<string, unknown>> | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type TipoCob = 'cob' | 'cobv';

export interface LocationsTable {
  id: Generated<bigint>;
  account_id: Id;
  tipo_cob: TipoCob;
  token: string;
  created_at: CreatedAt;
}

/** A payload location of a recurrence (BCB's locrec). */
export interface RecLocationsTable {
  id: Generated<bigint>;
  account_id: Id;
  token: string;
  created_at: CreatedAt;
}

export type RecStatus = 'CRIADA' | 'APROVADA' | 'REJEITADA' | 'EXPIRADA' | 'CANCELADA';
export type RecPeriodicidade = 'SEMANAL' | 'MENSAL' | 'TRIMESTRAL' | 'SEMESTRAL' | 'ANUAL';
export type RecJornada = 'AGUARDANDO_DEFINICAO' | 'JORNADA_1' | 'JORNADA_2' | 'JORNADA_3' | 'JORNADA_4';
export type RecPolitica = 'NAO_PERMITE' | 'PERMITE_3R_7D';

/** A recurrence of Pix Automático, on the receiver's side (BCB's rec). */
export interface RecurrencesTable {
  id: Generated<bigint>;
  id_rec: string;
  /** The receiver's account; null for a receiver at another institution (recebedor_externo). */
  account_id: bigint | null;
  loc_id: bigint | null;
  status: RecStatus;
  contrato: string;
  objeto: string | null;
  devedor_document_type: 'CPF' | 'CNPJ';
  devedor_document: string;
  devedor_nome: string;
  /** A date (YYYY-MM-DD), read as text. */
  data_inicial: ColumnType<string, string, string>;
  data_final: ColumnType<string | null, string | null | undefined, string | null>;
  periodicidade: RecPeriodicidade;
  valor_rec_centavos: bigint | null;
  valor_minimo_centavos: bigint | null;
  politica_retentativa: RecPolitica;
  convenio: string | null;
  jornada: RecJornada;
  jornada_txid: string | null;
  pagador: Json<Record<string, string>> | null;
  encerramento: Json<Record<string, Record<string, string>>> | null;
  history: Json<{ status: RecStatus; data: string }[]>;
  /** The payer's maximum per charge, set when it approved a recurrence without a fixed amount. */
  valor_maximo_pagador_centavos: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  /** The payer's account, when the payer is an account holder of this service. */
  payer_account_id: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  /** A receiver at another institution, as it described itself. */
  recebedor_externo: ColumnType<ExternalReceiver | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** A receiver at another institution (the sandbox's): its CNPJ, name and PSP. */
export interface ExternalReceiver {
  cnpj: string;
  nome: string;
  ispbParticipante: string;
}

export type SolicRecStatus = 'CRIADA' | 'ENVIADA' | 'RECEBIDA' | 'REJEITADA' | 'ACEITA' | 'EXPIRADA' | 'CANCELADA';

/** A solicitation of a payer's approval of a recurrence (BCB's solicrec, journey 1). */
export interface RecSolicitationsTable {
  id: Generated<bigint>;
  id_solic_rec: string;
  /** The receiver's account; null when another institution's receiver sent it. */
  account_id: bigint | null;
  recurrence_id: Id;
  status: SolicRecStatus;
  expires_at: Timestamp;
  destinatario: Json<Record<string, string>>;
  history: Json<{ status: SolicRecStatus; data: string }[]>;
  next_step_at: Timestamp | null;
  /** The account holder of this service it reached, when the payer is one. */
  payer_account_id: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

export type CobRStatus = 'CRIADA' | 'ATIVA' | 'CONCLUIDA' | 'EXPIRADA' | 'REJEITADA' | 'CANCELADA';
export type AttemptStatus = 'SOLICITADA' | 'AGENDADA' | 'PAGA' | 'CANCELADA' | 'REJEITADA' | 'EXPIRADA';
export type AttemptTipo = 'AGND' | 'NTAG' | 'RIFL';
export type AttemptStep = 'answer' | 'answer_overdue' | 'settle' | 'retry';

/** A recurring charge of Pix Automático (BCB's cobr). */
export interface RecurringChargesTable {
  id: Generated<bigint>;
  /** The receiver's account; null for a receiver at another institution. */
  account_id: bigint | null;
  recurrence_id: Id;
  txid: string;
  status: CobRStatus;
  /** Dates (YYYY-MM-DD), read as text. */
  due_date: ColumnType<string, string, string>;
  settlement_date: ColumnType<string, string, string>;
  cycle: number;
  ajuste_dia_util: boolean;
  amount_centavos: bigint;
  info_adicional: string | null;
  recebedor: Json<{ agencia?: string; conta: string; tipoConta: string }>;
  devedor: Json<Record<string, string>> | null;
  encerramento: Json<Record<string, Record<string, string>>> | null;
  history: Json<{ status: CobRStatus; data: string }[]>;
  paid_transaction_id: LaterId;
  next_step_at: Timestamp | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** An attempt to settle a recurring charge (BCB's tentativas). */
export interface RecurringChargeAttemptsTable {
  id: Generated<bigint>;
  charge_id: Id;
  position: number;
  tipo: AttemptTipo;
  data_liquidacao: ColumnType<string, string, string>;
  status: AttemptStatus;
  end_to_end_id: string;
  rejeicao: Json<{ codigo: string; descricao: string }> | null;
  history: Json<{ status: AttemptStatus; data: string }[]>;
  step: AttemptStep | null;
  next_step_at: Timestamp | null;
  /** The payer's Pix out that paid it, when the payer is an account holder of this service. */
  debit_transaction_id: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  created_at: CreatedAt;
  updated_at: Timestamp;
}

/** A receiver's webhook of recurrences or recurring charges (PUT /v2/webhookrec, /v2/webhookcobr). */
export interface AutomaticoWebhooksTable {
  id: Generated<bigint>;
  account_id: Id;
  kind: 'rec' | 'cobr';
  webhook_url: string;
  destination_id: Id;
  created_at: CreatedAt;
}

export interface ChargeRevisionsTable {
  charge_id: Id;
  revisao: number;
  snapshot: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface CobvBatchesTable {
  account_id: Id;
  id: Id;
  descricao: string;
  created_at: CreatedAt;
}

export interface CobvBatchItemsTable {
  account_id: Id;
  batch_id: Id;
  txid: string;
  position: number;
  status: 'EM_PROCESSAMENTO' | 'CRIADA' | 'NEGADA';
  problema: Json<Record<string, unknown>> | null;
  created_at: CreatedAt;
}

export interface PixKeyWebhooksTable {
  id: Generated<bigint>;
  account_id: Id;
  chave: string;
  webhook_url: string;
  destination_id: Id;
  created_at: CreatedAt;
}

export type RefundStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';
export type RefundNature = 'ORIGINAL' | 'RETIRADA' | 'MED_OPERACIONAL' | 'MED_FRAUDE';

export interface RefundsTable {
  id: Generated<bigint>;
  account_id: Id;
  original_transaction_id: Id;
  transaction_id: Id;
  refund_id: string;
  rtr_id: string;
  amount_centavos: bigint;
  natureza: RefundNature;
  descricao: string | null;
  status: RefundStatus;
  motivo: string | null;
  requested_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type MedStatus = 'OPEN' | 'ACCEPTED' | 'REJECTED';
export type MedReason = 'FRAUD' | 'OPERATIONAL_FLAW';

export interface MedsTable {
  id: Generated<bigint>;
  account_id: Id;
  transaction_id: Id;
  amount_centavos: bigint;
  reason: MedReason;
  details: string | null;
  status: MedStatus;
  refund_id: LaterId;
  hold_ledger_account_id: Id;
  created_at: CreatedAt;
  closed_at: Timestamp | null;
}

export interface SettlementQueueTable {
  transaction_id: Id;
  priority: 'HIGH' | 'NORM';
  pix_key: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export type WebhookEventType =
  | 'cash_in'
  | 'cash_out'
  | 'refund_in'
  | 'refund_out'
  | 'med_created'
  | 'med_accepted'
  | 'med_rejected'
  | 'authorization_requested'
  | 'authorization_approved'
  | 'authorization_rejected'
  | 'authorization_cancelled'
  | 'authorization_expired'
  | 'recurring_charge_scheduled'
  | 'recurring_charge_paid'
  | 'recurring_charge_failed'
  | 'recurring_charge_cancelled';

export interface WebhooksTable {
  id: Generated<bigint>;
  account_id: Id;
  event_type: WebhookEventType;
  url: string;
  /** The account's receiving origin of this URL (webhook_destinations). */
  destination_id: Id;
  headers: Json<Record<string, string>>;
  is_active: ColumnType<boolean, boolean | undefined, boolean>;
  version: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Set on a registration a listener made for itself (`pix-api listen`): not the account's own. */
  listener_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A developer's `pix-api listen` (sandbox): where an account's deliveries are forwarded from. */
export interface WebhookListenersTable {
  id: string;
  account_id: Id;
  name: string;
  kinds: string[];
  /** BCB's registrations it took over, given back when it stops. */
  replaced: Json<ReplacedRegistration[]>;
  created_at: CreatedAt;
  seen_at: Date;
}

/** A registration of BCB's callbacks a listener took over: a key's webhook, or the account's rec or cobr one, with its URL before. */
export interface ReplacedRegistration {
  kind: 'pix' | 'rec' | 'cobr';
  chave?: string;
  url: string | null;
}

/** A delivery that arrived at a listener, waiting for the listener to take it and answer it. */
export interface WebhookForwardsTable {
  id: Generated<bigint>;
  listener_id: string;
  path: string;
  headers: Json<Record<string, string>>;
  body: string;
  received_at: Date;
  taken_at: Date | null;
  status: number | null;
  duration_ms: number | null;
  error: string | null;
  answered_at: Date | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<bigint>;
  outbox_id: Id | null;
  account_id: Id;
  webhook_id: LaterId;
  url: string;
  message_id: string;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Timestamp;
  created_at: CreatedAt;
  event_type: string | null;
  transaction_id: Id | null;
  last_attempt_at: Timestamp | null;
  destination_id: Id | null;
  held: ColumnType<boolean, boolean | undefined, boolean>;
  leased_until: Timestamp | null;
  /** The sandbox `late` fault that held it (migration 0017), and until when at most: null once it goes. */
  late_fault: ColumnType<bigint | null, bigint | null | undefined, bigint | null>;
  late_until: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

/** One account's receiving origin: its bound on deliveries in flight and its circuit breaker. */
export interface WebhookDestinationsTable {
  id: Generated<bigint>;
  account_id: Id;
  origin: string;
  failures: ColumnType<number, number | undefined, number>;
  opens: ColumnType<number, number | undefined, number>;
  open_until: Timestamp | null;
  ready_at: Timestamp | null;
  wakes: ColumnType<number, number | undefined, number>;
  claims: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
}

export interface WebhookLogsTable {
  id: Generated<bigint>;
  account_id: Id;
  delivery_id: Id | null;
  transaction_id: Id | null;
  event_type: string;
  url: string;
  message_id: string;
  attempt: number;
  status_code: number | null;
  success: boolean;
  duration_ms: number;
  error: string | null;
  is_resend: ColumnType<boolean, boolean | undefined, boolean>;
  created_at: CreatedAt;
  /** The attempt's webhook-timestamp, on the real clock; null when nothing was sent (or logged before it was kept). */
  signed_at: ColumnType<Date | null, Date | string | null | undefined, Date | null>;
}

/** The sandbox's controls (migration 0005): the test clock's offset and the faults' version. */
export interface SandboxStateTable {
  id: ColumnType<boolean, never, never>;
  clock_offset_ms: bigint;
  clock_epoch: Generated<bigint>;
  faults_version: bigint;
}

export type FaultKind = 'webhook' | 'settlement' | 'directory' | 'automatico';
export type FaultEffect = 'status' | 'timeout' | 'delay' | 'reject' | 'unavailable' | 'late' | 'duplicate';
export type FaultStage = 'solicitation' | 'scheduling' | 'attempt';

export interface SandboxFaultsTable {
  id: Generated<bigint>;
  kind: FaultKind;
  effect: FaultEffect;
  url_prefix: string | null;
  pix_key: string | null;
  status: number | null;
  delay_ms: bigint | null;
  reason: string | null;
  remaining: number | null;
  /** automatico: the stage of the sandbox payer PSP's answers it refuses (or delays). */
  stage: ColumnType<FaultStage | null, FaultStage | null | undefined, FaultStage | null>;
  created_at: Date;
}

export interface SandboxInboxTable {
  id: Generated<bigint>;
  name: string;
  received_at: Date;
  method: string;
  headers: ColumnType<Record<string, string>, string, string>;
  body: string;
  status: number;
  /** The sub-path it came to (`/pix`: one segment), '' for the inbox itself. */
  path: Generated<string>;
}

/** Tracing on: the traceparent of the request that made a transaction (migration 0006). */
export interface TraceContextsTable {
  transaction_id: bigint;
  traceparent: string;
  created_at: Date;
}

export interface DB {
  trace_contexts: TraceContextsTable;
  sandbox_state: SandboxStateTable;
  sandbox_faults: SandboxFaultsTable;
  sandbox_inbox: SandboxInboxTable;
  webhooks: WebhooksTable;
  webhook_listeners: WebhookListenersTable;
  webhook_forwards: WebhookForwardsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_destinations: WebhookDestinationsTable;
  webhook_logs: WebhookLogsTable;
  charges: ChargesTable;
  locations: LocationsTable;
  rec_locations: RecLocationsTable;
  recurrences: RecurrencesTable;
  rec_solicitations: RecSolicitationsTable;
  recurring_charges: RecurringChargesTable;
  recurring_charge_attempts: RecurringChargeAttemptsTable;
  automatico_webhooks: AutomaticoWebhooksTable;
  charge_revisions: ChargeRevisionsTable;
  cobv_batches: CobvBatchesTable;
  cobv_batch_items: CobvBatchItemsTable;
  pix_key_webhooks: PixKeyWebhooksTable;
  refunds: RefundsTable;
  meds: MedsTable;
  settlement_queue: SettlementQueueTable;
  outbox: OutboxTable;
  accounts: AccountsTable;
  account_certificates: AccountCertificatesTable;
  signing_keys: SigningKeysTable;
  payload_signing_authority: PayloadSigningAuthorityTable;
  payload_signing_keys: PayloadSigningKeysTable;
  dict_keys: DictKeysTable;
  ledger_accounts: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  postings: PostingsTable;
  transactions: TransactionsTable;
  idempotency_keys: IdempotencyKeysTable;
  schema_migrations: { version: number; name: string; applied_at: CreatedAt };
  /** The function files applied, by name, with the sha256 of the text applied (db/functions.ts). */
  schema_functions: { name: string; hash: string; applied_at: CreatedAt };
  /** Written by its migration only: the code reads it. */
  database_identity: { id: ColumnType<string, never, never>; created_at: ColumnType<Date, never, never> };
  demo_account: { account_id: Id; created_at: CreatedAt };
}
