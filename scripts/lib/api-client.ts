// The one HTTP client of the scripts and the tests: typed methods for the operations they call,
// over a pluggable transport (undici or fetch over real HTTP, Fastify's inject in process). The
// client certificate travels in X-SSL-Client-Cert, as a TLS-terminating proxy sends it; over the
// service's own mutual TLS a transport leaves the header out and presents the certificate itself.
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type {
  ArrivedPix,
  BalanceAnswer,
  BalancesAnswer,
  Charge,
  ChargeInput,
  CreatedAccount,
  ExternalKeyInput,
  InboxArrivals,
  ClockView,
  IncomingPixInput,
  LinkedCertificateAnswer,
  OpenMedInput,
  Payer,
  PixKeyLookup,
  PixKeyType,
  Refund,
  RefundInput,
  RegisteredExternalKey,
  RegisteredPixKey,
  RegisteredWebhook,
  SandboxRecurrence,
  SandboxRecurrenceInput,
  SandboxRecurringCharge,
  SettleAnswer,
  SigningSecret,
  TokenAnswer,
  TransactionList,
  TransferAnswer,
  TransferInput,
  Webhook,
  WebhookInput,
  WebhookLogList,
} from './api-types.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  method: Method;
  /** Path and query string. */
  path: string;
  headers?: Record<string, string>;
  /** Sent as JSON when given. */
  body?: unknown;
}

/** What a transport hands back: the status, the headers (lower-case names) and the body's bytes. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  bytes: Buffer;
}

export type Transport = (request: ApiRequest) => Promise<RawAnswer>;

const jsonHeaders = (request: ApiRequest) => ({
  ...request.headers,
  ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
});
const jsonBody = (request: ApiRequest) => (request.body === undefined ? undefined : JSON.stringify(request.body));

function flatHeaders(headers: Record<string, string | string[] | number | undefined>): Record<string, string | undefined> {
  const flat: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) flat[name.toLowerCase()] = Array.isArray(value) ? value[0] : value === undefined ? undefined : String(value);
  return flat;
}

/**
 * Over an undici dispatcher: a Pool or Client (their own origin) or an Agent (`origin` needed).
 * Timeouts, when given, bound the wait for the headers and for the body.
 */
export function undiciTransport(dispatcher: Dispatcher, options: { origin?: string; timeoutMs?: number } = {}): Transport {
  const { origin, timeoutMs } = options;
  return async (request) => {
    const body = jsonBody(request);
    const res = await dispatcher.request({
      ...(origin ? { origin } : {}),
      method: request.method,
      path: request.path,
      headers: jsonHeaders(request),
      ...(body === undefined ? {} : { body }),
      ...(timeoutMs === undefined ? {} : { headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
    });
    return { status: res.statusCode, headers: flatHeaders(res.headers), bytes: Buffer.from(await res.body.arrayBuffer()) };
  };
}

/** Over the global fetch, to `baseUrl` (http://host:port). */
export function fetchTransport(baseUrl: string): Transport {
  return async (request) => {
    const body = jsonBody(request);
    const res = await fetch(baseUrl + request.path, { method: request.method, headers: jsonHeaders(request), ...(body === undefined ? {} : { body }) });
    return { status: res.status, headers: Object.fromEntries(res.headers), bytes: Buffer.from(await res.arrayBuffer()) };
  };
}

/** What `injectTransport` needs of a Fastify app. */
export interface Injectable {
  inject(options: {
    method: Method;
    url: string;
    headers: Record<string, string>;
    payload?: string;
    remoteAddress?: string;
  }): PromiseLike<{ statusCode: number; headers: Record<string, string | string[] | number | undefined>; rawPayload: Buffer }>;
}

/** In process, through Fastify's inject (from `remoteAddress` when given). */
export function injectTransport(app: Injectable, options: { remoteAddress?: string } = {}): Transport {
  return async (request) => {
    const payload = jsonBody(request);
    const res = await app.inject({
      method: request.method,
      url: request.path,
      headers: jsonHeaders(request),
      ...(payload === undefined ? {} : { payload }),
      ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
    });
    return { status: res.statusCode, headers: flatHeaders(res.headers), bytes: res.rawPayload };
  };
}

/** An answer whose text and JSON body are decoded when first read: most loads only count statuses. */
export class ApiAnswer<T = Record<string, unknown>> {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly bytes: Buffer;
  #text: string | undefined;
  #body: T | undefined;

  constructor(raw: RawAnswer) {
    this.status = raw.status;
    this.headers = raw.headers;
    this.bytes = raw.bytes;
  }

  get text(): string {
    this.#text ??= this.bytes.toString('utf8');
    return this.#text;
  }

  /** The JSON body ({} when empty). */
  get body(): T {
    this.#body ??= (this.text ? JSON.parse(this.text) : {}) as T;
    return this.#body;
  }
}

/** An answer with another status than the operation's. */
export class ApiError extends Error {
  readonly status: number;
  readonly text: string;

  constructor(request: ApiRequest, answer: ApiAnswer<unknown>) {
    super(`${request.method} ${request.path.split('?')[0]}: ${answer.status} ${answer.text}`);
    this.status = answer.status;
    this.text = answer.text;
  }
}

/** Authorization (Bearer) and, unless the transport presents the certificate itself, X-SSL-Client-Cert. */
export type AuthHeaders = Record<string, string>;

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

const query = (params: Record<string, string | number | boolean | undefined> = {}) => {
  const defined = Object.entries(params).filter((e): e is [string, string | number | boolean] => e[1] !== undefined);
  return defined.length === 0 ? '' : `?${new URLSearchParams(defined.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
};
const segment = encodeURIComponent;

export class ApiClient {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /** Any answer, whatever its status. */
  async send<T = Record<string, unknown>>(request: ApiRequest): Promise<ApiAnswer<T>> {
    return new ApiAnswer<T>(await this.#transport(request));
  }

  /** The body of an answer with one of `statuses`; any other throws an ApiError. */
  async expect<T>(request: ApiRequest, ...statuses: number[]): Promise<T> {
    const answer = await this.send<T>(request);
    if (!statuses.includes(answer.status)) throw new ApiError(request, answer);
    return answer.body;
  }

  /** The operator and sandbox routes, with the admin token. */
  operator(adminToken: string): OperatorApi {
    return new OperatorApi(this, { authorization: `Bearer ${adminToken}` });
  }

  /** The account routes, with an access token and its certificate. */
  account(headers: AuthHeaders): AccountApi {
    return new AccountApi(this, headers);
  }

  /** POST /api/auth/token, with the certificate in X-SSL-Client-Cert unless the transport presents it. */
  tokenRequest(credentials: ClientCredentials, certHeader?: string): ApiRequest {
    const body = { clientId: credentials.clientId, clientSecret: credentials.clientSecret };
    return { method: 'POST', path: '/api/auth/token', headers: certHeader ? { 'x-ssl-client-cert': certHeader } : {}, body };
  }

  token(credentials: ClientCredentials, certHeader?: string): Promise<TokenAnswer> {
    return this.expect(this.tokenRequest(credentials, certHeader), 201);
  }
}

/** What the operator's routes and an account's share: one client, and the headers each of their requests carries. */
abstract class RouteGroup {
  protected readonly client: ApiClient;
  readonly headers: AuthHeaders;

  constructor(client: ApiClient, headers: AuthHeaders) {
    this.client = client;
    this.headers = headers;
  }

  /** A request with this group's headers, and `headers` besides. */
  request(method: Method, path: string, body?: unknown, headers: Record<string, string> = {}): ApiRequest {
    return { method, path, headers: { ...this.headers, ...headers }, ...(body === undefined ? {} : { body }) };
  }
}

export class OperatorApi extends RouteGroup {
  #post<T>(path: string, body: unknown, ...statuses: number[]): Promise<T> {
    return this.client.expect<T>(this.request('POST', path, body), ...statuses);
  }

  createAccount(input: { name: string; document: string }): Promise<CreatedAccount> {
    return this.#post('/admin/accounts', input, 201);
  }

  linkCertificate(accountId: number, pem: string): Promise<LinkedCertificateAnswer> {
    return this.#post(`/admin/accounts/${accountId}/certificates`, { pem }, 201);
  }

  registerPixKey(accountId: number, key: { type: 'evp' } | { type: Exclude<PixKeyType, 'evp'>; key: string } = { type: 'evp' }): Promise<RegisteredPixKey> {
    return this.#post(`/admin/accounts/${accountId}/pix-keys`, key, 201);
  }

  /** A key of another institution in the sandbox's directory. */
  registerExternalKey(input: ExternalKeyInput): Promise<RegisteredExternalKey> {
    return this.#post('/sandbox/dict/keys', input, 201);
  }

  incomingPixRequest(input: IncomingPixInput): ApiRequest {
    return this.request('POST', '/sandbox/pix/incoming', input);
  }

  /** A PIX from another institution arriving at one of our keys. */
  incomingPix(input: IncomingPixInput): Promise<ArrivedPix> {
    return this.client.expect(this.incomingPixRequest(input), 201);
  }

  settleRequest(): ApiRequest {
    return this.request('POST', '/sandbox/settle');
  }

  settle(): Promise<SettleAnswer> {
    return this.client.expect(this.settleRequest(), 200);
  }

  payCharge(txid: string, payer: Payer): Promise<ArrivedPix> {
    return this.#post(`/sandbox/cob/${segment(txid)}/pay`, { payer }, 201);
  }

  openMed(input: OpenMedInput): Promise<{ medId: number }> {
    return this.#post('/sandbox/med', input, 201);
  }

  /** Moves the test clock forward by `seconds`, for every process of the service. */
  advanceClock(seconds: number): Promise<ClockView> {
    return this.#post('/sandbox/clock/advance', { seconds }, 200);
  }

  /** Another institution's receiver (the sandbox) asks an account holder to approve a recurrence of Pix Automático. */
  askAuthorization(input: SandboxRecurrenceInput): Promise<SandboxRecurrence> {
    return this.#post('/sandbox/automatico/recurrences', input, 201);
  }

  /** That receiver sends a recurring charge of an approved recurrence. */
  sendRecurringCharge(idRec: string, input: { dueDate: string; amount: string; txid?: string; description?: string }): Promise<SandboxRecurringCharge> {
    return this.#post(`/sandbox/automatico/recurrences/${segment(idRec)}/charges`, input, 201);
  }

  /** Puts the test clock back at the real time. */
  resetClock(): Promise<ClockView> {
    return this.client.expect(this.request('POST', '/sandbox/clock/reset'), 200);
  }

  /** What arrived at the service's webhook inbox `name` (`{PUBLIC_URL}/sandbox/inbox/{name}`), newest first. */
  inbox(name: string): Promise<InboxArrivals> {
    return this.client.expect(this.request('GET', `/sandbox/inbox/${segment(name)}`), 200);
  }
}

export class AccountApi extends RouteGroup {
  #get<T>(path: string): Promise<T> {
    return this.client.expect<T>(this.request('GET', path), 200);
  }

  /** Pix Automático: the holder approves a PENDING authorization asked of it (journey 1). */
  approveAuthorization(idRec: string, body: { maximumAmount?: number } = {}): Promise<Record<string, unknown>> {
    return this.client.expect(this.request('POST', `/api/automatico/authorizations/${segment(idRec)}/approve`, body), 200);
  }

  balances(): Promise<BalancesAnswer> {
    return this.#get('/accounts/balances');
  }

  balance(): Promise<BalanceAnswer> {
    return this.#get('/balance');
  }

  transferRequest(body: TransferInput, idempotencyKey: string = randomUUID()): ApiRequest {
    return this.request('POST', '/dict/pix', body, { 'x-idempotency-key': idempotencyKey });
  }

  transfer(body: TransferInput, idempotencyKey?: string): Promise<TransferAnswer> {
    return this.client.expect(this.transferRequest(body, idempotencyKey), 201);
  }

  lookupKey(key: string): Promise<PixKeyLookup> {
    return this.#get(`/dict/keys/${segment(key)}`);
  }

  listTransactions(params?: Record<string, string | number | boolean | undefined>): Promise<TransactionList> {
    return this.#get(`/api/transactions${query(params)}`);
  }

  createCharge(txid: string, body: ChargeInput): Promise<Charge> {
    return this.client.expect(this.request('PUT', `/cob/${segment(txid)}`, body), 201);
  }

  getCharge(txid: string): Promise<Charge> {
    return this.#get(`/cob/${segment(txid)}`);
  }

  /** The charge's QR code (format png or svg), as bytes with its content type. */
  async chargeQrCode(txid: string, format: 'png' | 'svg'): Promise<{ bytes: Buffer; contentType: string | undefined }> {
    const request = this.request('GET', `/cob/${segment(txid)}/qrcode${query({ format })}`);
    const answer = await this.client.send(request);
    if (answer.status !== 200) throw new ApiError(request, answer);
    return { bytes: answer.bytes, contentType: answer.headers['content-type'] };
  }

  refundRequest(endToEndId: string, id: string, body: RefundInput): ApiRequest {
    return this.request('PUT', `/pix/${segment(endToEndId)}/devolucao/${segment(id)}`, body);
  }

  /** 201 when made, 200 when the same refund was asked before. */
  requestRefund(endToEndId: string, id: string, body: RefundInput): Promise<Refund> {
    return this.client.expect(this.refundRequest(endToEndId, id, body), 201, 200);
  }

  getRefund(endToEndId: string, id: string): Promise<Refund> {
    return this.#get(`/pix/${segment(endToEndId)}/devolucao/${segment(id)}`);
  }

  registerWebhook(body: WebhookInput): Promise<RegisteredWebhook> {
    return this.client.expect(this.request('POST', '/api/webhooks', body), 201);
  }

  updateWebhook(id: number, body: { isActive?: boolean; headers?: WebhookInput['headers'] }): Promise<Webhook> {
    return this.client.expect(this.request('PATCH', `/api/webhooks/${id}`, body), 200);
  }

  signingSecret(): Promise<SigningSecret> {
    return this.#get('/api/webhooks/signing-secret');
  }

  webhookLogs(params?: Record<string, string | number | boolean | undefined>): Promise<WebhookLogList> {
    return this.#get(`/api/webhooks/logs${query(params)}`);
  }
}
