/**
 * Every `code` an error body can carry (decisions.md: a stable, machine-readable name of the
 * cause, so that two causes sharing a status are told apart without parsing `message`). The
 * OpenAPI document lists them as the enum of `ErrorBody.code`, and `docs/errors.md` is written
 * from this table (`npm run openapi`; CI checks both are current). A code is never renamed or
 * reused for another cause once released; new causes get new codes.
 */
export const ERROR_CODES = {
  // Requests the framework refuses before any route runs
  VALIDATION_FAILED: { status: 400, description: 'A field, parameter or header does not match the schema; `message` names it' },
  INVALID_JSON: { status: 400, description: 'The body is not valid JSON' },
  INVALID_URL: { status: 400, description: 'The URL has a bad percent-encoding' },
  INVALID_REQUEST: { status: 400, description: 'The request is malformed in another way the message describes' },
  NUL_CHARACTER: { status: 400, description: 'A value holds a NUL character or an unpaired surrogate, which no text column can store' },
  NESTING_TOO_DEEP: { status: 400, description: 'The body nests more than 32 levels deep' },
  VALUE_NOT_ACCEPTED: { status: 400, description: 'A value passed validation but the database could not take it' },
  ROUTE_NOT_FOUND: { status: 404, description: 'No route with this method and path' },
  BODY_TOO_LARGE: { status: 413, description: 'The body is over 64 KiB' },
  PARAMETER_TOO_LONG: { status: 414, description: 'A path parameter is too long' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: 'The body is not application/json' },
  INTERNAL_ERROR: { status: 500, description: 'An unexpected error; the request id finds it in the log' },
  SERVICE_UNAVAILABLE: { status: 503, description: 'The database is briefly unreachable or busy: send the same request again (same x-idempotency-key)' },
  OVERLOADED: { status: 503, description: 'Too many requests of this kind are waiting: retry after Retry-After' },
  DATABASE_UNAVAILABLE: { status: 503, description: 'GET /ready: the database is not reachable' },
  MIGRATIONS_PENDING: { status: 503, description: 'GET /ready: the database schema is behind this version' },

  // Authentication
  TOKEN_MISSING: { status: 401, description: 'No Authorization header' },
  TOKEN_MALFORMED: { status: 401, description: 'The Authorization header is not Bearer <token>' },
  TOKEN_INVALID: { status: 401, description: 'The access token is invalid, expired, revoked or signed by a retired key' },
  CERTIFICATE_REQUIRED: { status: 401, description: 'No client certificate (on the mutual-TLS handshake, or in X-SSL-Client-Cert from a trusted proxy): 401 with an access token, 400 at the token routes' },
  CERTIFICATE_MALFORMED: { status: 400, description: 'X-SSL-Client-Cert is not a URL-encoded PEM X.509 certificate' },
  CERTIFICATE_UNTRUSTED: { status: 401, description: 'The mutual-TLS certificate does not chain to TLS_CLIENT_CA_FILE' },
  CERTIFICATE_MISMATCH: { status: 401, description: 'The client certificate is not the one the access token is bound to' },
  CERTIFICATE_UNLINKED: { status: 401, description: 'The certificate of the access token is no longer linked to the account' },
  CERTIFICATE_EXPIRED: { status: 401, description: 'The client certificate has expired or is not yet valid' },
  SCOPE_NOT_GRANTED: { status: 403, description: 'The access token does not carry the scope the operation requires' },
  CERTIFICATE_NOT_LINKED: { status: 403, description: 'The certificate is not linked to any account' },
  CERTIFICATE_OTHER_ACCOUNT: { status: 401, description: 'The certificate is linked to another account than the client credentials' },
  INVALID_CLIENT: { status: 401, description: 'Unknown client id or wrong client secret' },
  TOO_MANY_FAILED_ATTEMPTS: { status: 429, description: 'Too many failed attempts lately: token requests from this address (IPv6: its /64), client or certificate; wrong admin tokens from this address' },
  ADMIN_TOKEN_INVALID: { status: 401, description: 'The admin bearer token is missing or wrong' },

  // Accounts, certificates, keys (operator)
  ACCOUNT_NOT_FOUND: { status: 404, description: 'No such account' },
  INVALID_NAME: { status: 400, description: 'The name is blank' },
  INVALID_DOCUMENT: { status: 400, description: 'The document is not a valid CPF or CNPJ' },
  INVALID_ADDRESS: { status: 400, description: 'The address is not one BCB takes: a street and city of 1 to 200 characters, one of the 27 UFs, a CEP of 8 digits' },
  INVALID_CERTIFICATE: { status: 400, description: 'The PEM is not one X.509 certificate, or it is expired or not yet valid' },
  CERTIFICATE_LINKED_ELSEWHERE: { status: 409, description: 'The certificate is already linked to another account' },
  CERTIFICATE_NOT_FOUND: { status: 404, description: 'The certificate is not linked to this account' },
  INVALID_PIX_KEY_TYPE: { status: 400, description: 'The key type is not cpf, cnpj, email, phone or evp' },
  PIX_KEY_EXISTS: { status: 409, description: 'The key is already in the directory' },
  PIX_KEY_LIMIT: { status: 422, description: 'The account already holds the most keys it may' },
  SIGNING_KEY_NOT_FOUND: { status: 404, description: 'No signing key has this kid' },
  SIGNING_KEY_LAST_ACTIVE: { status: 409, description: 'The only active signing key cannot be retired: rotate first' },

  // Transfers and the directory
  INVALID_PIX_KEY: { status: 400, description: 'Not a Pix key (CPF, CNPJ, e-mail, +55 phone or EVP)' },
  INVALID_AMOUNT: { status: 400, description: 'The amount is not greater than 0 with at most 2 decimals' },
  INVALID_CREDITOR_DOCUMENT: { status: 400, description: 'creditorDocument is not a valid CPF or CNPJ' },
  CREDITOR_DOCUMENT_REQUIRED: { status: 400, description: 'priority HIGH needs creditorDocument' },
  IDEMPOTENCY_KEY_REQUIRED: { status: 400, description: 'No x-idempotency-key header' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, description: 'x-idempotency-key is not a UUID' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, description: 'The x-idempotency-key was used with a different request' },
  IDEMPOTENCY_IN_FLIGHT: { status: 409, description: 'A request with this x-idempotency-key is still being processed' },
  EXTERNAL_ID_TAKEN: { status: 409, description: 'Another transfer of the account already has this externalId' },
  PIX_KEY_NOT_FOUND: { status: 422, description: 'The key is not in the directory: 422 to a transfer, 404 at GET /dict/keys/{key}' },
  OWN_PIX_KEY: { status: 422, description: 'The key belongs to the paying account' },
  ISPB_DENIED: { status: 422, description: "The key's institution is listed in ispbDeny" },
  CREDITOR_DOCUMENT_MISMATCH: { status: 422, description: "creditorDocument is not the key owner's document" },
  INSUFFICIENT_BALANCE: { status: 422, description: 'The available balance does not cover the amount' },
  DIRECTORY_RATE_LIMITED: { status: 429, description: "The account's directory look-ups (POST /dict/pix, GET /dict/keys/{key}) are spent: retry after Retry-After" },

  // Transaction views
  INVALID_DATE: { status: 400, description: 'A date is neither YYYY-MM-DD nor an RFC 3339 timestamp' },
  INVALID_INTERVAL: { status: 400, description: 'The end of the interval is before its start' },
  INTERVAL_TOO_LONG: { status: 400, description: 'The interval is longer than 31 days' },
  TRANSACTION_NOT_FOUND: { status: 404, description: 'No transaction of the account has this identifier' },
  TOO_MANY_LIST_REQUESTS: { status: 429, description: 'The account already has as many list queries running as it may' },
  LIST_TIMEOUT: { status: 503, description: 'The list ran longer than its time limit and was cancelled: narrow it, or retry after Retry-After' },

  // Charges
  INVALID_CHARGE: { status: 400, description: 'The charge body breaks a rule the message names' },
  INVALID_CPF: { status: 400, description: 'devedor.cpf is not a valid CPF' },
  INVALID_CNPJ: { status: 400, description: 'devedor.cnpj is not a valid CNPJ' },
  INVALID_DEVEDOR: { status: 400, description: 'devedor has both or neither of cpf and cnpj' },
  INVALID_FILTER: { status: 400, description: 'Two filters that exclude each other were given' },
  EMPTY_REVISION: { status: 400, description: 'A PATCH that changes nothing' },
  TXID_TAKEN: { status: 409, description: 'The account already has a charge with this txid' },
  TXID_AMBIGUOUS: { status: 409, description: 'Sandbox: several accounts hold a charge with this txid; name the account' },
  CHARGE_NOT_FOUND: { status: 404, description: 'The account has no charge with this txid' },
  CHARGE_NOT_ACTIVE: { status: 422, description: 'The charge is not ATIVA (paid, cancelled or expired)' },
  WRONG_AMOUNT: { status: 422, description: "The payment's amount is not the charge's" },
  LOCATION_NOT_FOUND: { status: 400, description: 'loc.id names no location of this account' },
  LOCATION_WRONG_KIND: { status: 400, description: "loc.id names a location of the other tipoCob (cob or cobv)" },
  LOCATION_IN_USE: { status: 400, description: 'loc.id names a location already linked to a charge' },
  INVALID_RETIRADA: { status: 400, description: "valor.retirada (saque or troco) breaks BCB's rules for it, or valor does beside it" },
  REVISION_NOT_FOUND: { status: 400, description: "/v2: the charge never had the revisao asked for (BCB's CobConsultaInvalida, CobVConsultaInvalida)" },
  PAYLOAD_LOCATION_NOT_FOUND: { status: 404, description: 'The account has no payload location with this id' },
  PAYLOAD_NOT_FOUND: { status: 404, description: 'A public location that does not exist or serves no charge' },
  INVALID_COBV_VALOR: { status: 400, description: "A due-date charge's multa, juros, abatimento or desconto breaks one of BCB's rules; `message` names it" },
  COBV_BATCH_NOT_FOUND: { status: 404, description: 'No batch of due-date charges (lotecobv) of this account has this id' },
  COBV_BATCH_MISMATCH: { status: 400, description: "A batch's request names charges its first request did not, leaves some out (PUT), or names one twice" },
  COBV_BATCH_TXID_TAKEN: { status: 400, description: 'A new batch names a txid the account already used for a charge or in another batch' },

  // Pix Automático
  RECURRENCE_NOT_FOUND: { status: 404, description: 'No recurrence (rec) of this account has this idRec' },
  RECURRENCE_INVALID: { status: 400, description: "A recurrence's request breaks one of its rules (dates, amounts, receiver, location); `message` names it" },
  RECURRENCE_ENDED: { status: 400, description: 'The recurrence is CANCELADA, REJEITADA or EXPIRADA: it takes no more changes' },
  RECURRENCE_TXID_MISMATCH: { status: 400, description: "GET /v2/rec/{idRec}?txid: the charge does not fit the recurrence's journey" },
  SOLICITATION_NOT_FOUND: { status: 404, description: 'No solicitation of a recurrence (solicrec) of this account has this idSolicRec' },
  SOLICITATION_INVALID: { status: 400, description: "A solicitation's request breaks one of its rules (the recurrence, the expiry, the payer, one already under way); `message` names it" },
  SOLICITATION_ENDED: { status: 400, description: 'The solicitation is no longer CRIADA, ENVIADA or RECEBIDA: it cannot be cancelled' },
  RECURRING_CHARGE_NOT_FOUND: { status: 404, description: 'No recurring charge (cobr) of this account has this txid, or the account pays none with this id' },
  RECURRING_CHARGE_INVALID: { status: 400, description: "A recurring charge's request breaks one of its rules (the recurrence, the due date and its window, the cycle, the amount, the account); `message` names it" },
  RECURRING_CHARGE_ENDED: { status: 400, description: 'The recurring charge is CONCLUIDA, REJEITADA, CANCELADA or EXPIRADA: it takes no more changes' },
  CANCELLATION_TOO_LATE: { status: 422, description: "A recurring charge can no longer be cancelled: the receiver cancels before the day of its first attempt, the payer until 23:59 of the day before it is due" },
  RETRY_NOT_ALLOWED: { status: 400, description: "POST /v2/cobr/{txid}/retentativa/{data}: the recurrence takes no retries, an attempt is under way, or the date is not one a retry may take" },
  NO_NEXT_EVENT: { status: 409, description: 'POST /sandbox/clock/advance {"to": "next-event"}: no rule of the service is due to act at any later moment' },

  // Refunds and MED
  INVALID_VALUE: { status: 400, description: 'valor is not a decimal string with 2 places greater than 0' },
  REFUND_EXCEEDS_ORIGINAL: { status: 400, description: 'The refunds would exceed what is still refundable of the PIX' },
  REFUND_ID_REUSED: { status: 409, description: 'The refund id was used for this PIX with a different request' },
  REFUND_NOT_FOUND: { status: 404, description: 'No refund with this id for this PIX' },
  REFUND_PERIOD_EXPIRED: { status: 422, description: 'The PIX was received more than 89 days ago' },
  REFUND_NATURE_NOT_ALLOWED: { status: 400, description: '/v2: natureza RETIRADA for a PIX without a withdrawal or change' },
  MED_NOT_FOUND: { status: 404, description: 'No MED of the account has this id' },
  MED_ALREADY_OPEN: { status: 409, description: 'A MED is already open against this PIX' },
  MED_CLOSED: { status: 409, description: 'The MED is already accepted or rejected' },
  NOTHING_TO_DISPUTE: { status: 422, description: 'The PIX has been refunded in full' },
  NO_BALANCE_TO_BLOCK: { status: 422, description: 'The receiving account has no available balance to block' },

  // Webhooks
  INVALID_WEBHOOK_URL: { status: 400, description: 'The URL is not an HTTPS URL the service may deliver to; the message names the setting that allows it' },
  TOO_MANY_WEBHOOKS: { status: 400, description: 'Too many active URLs for the event type, or too many registrations for the account' },
  TOO_MANY_HEADERS: { status: 400, description: 'More than 5 custom headers' },
  INVALID_HEADER: { status: 400, description: 'A header name or value is not valid HTTP' },
  BLOCKED_HEADER: { status: 400, description: 'A reserved header name' },
  DUPLICATE_HEADER: { status: 400, description: 'A header name given twice' },
  WEBHOOK_NOT_FOUND: { status: 404, description: 'No registration of the account has this id (under /v2: no webhook for this key)' },
  PIX_KEY_NOT_OWNED: { status: 400, description: '/v2 webhook: the key is not one of the account\'s' },
  NO_WEBHOOK_URL: { status: 400, description: 'No active URL for the event type and no url in the body' },
  NOTHING_TO_RESEND: { status: 400, description: 'The transaction has no notification yet' },
  RATE_LIMITED: { status: 429, description: 'Too many requests of this kind in the last minute: retry after Retry-After' },

  // Sandbox
  INVALID_RECEIVED_AT: { status: 400, description: 'receivedAt is not a past timestamp' },
  OWN_ISPB: { status: 400, description: 'Keys of this institution are registered through the operator API' },
  INTERNAL_TRANSFER: { status: 422, description: 'The receiver is an account of this institution' },
  TRANSFER_NOT_FOUND: { status: 404, description: 'No transfer of this institution has that endToEndId' },
  TRANSFER_NOT_SETTLED: { status: 422, description: 'Only a settled transfer can be refunded' },

  // Sandbox payer (POST /sandbox/payer/pay)
  INVALID_PAID_AT: { status: 400, description: 'paidAt is not a past timestamp' },
  BRCODE_INVALID: { status: 422, description: 'The BR Code fails its CRC or structure, or names no valid key or location; `message` says which' },
  BRCODE_NOT_PAYABLE: { status: 422, description: "The BR Code is a Pix Automático recurrence's alone (journey 2): it authorizes charges and carries no payment" },
  SOLICITATION_NOT_ANSWERABLE: { status: 422, description: "The sandbox's payer answers a solicitation it has RECEBIDA; one to this institution's account holders is theirs to answer" },
  LISTENER_NOT_FOUND: { status: 404, description: 'No listener (pix-api listen) has this id: it was stopped, or never started' },
  FORWARD_NOT_FOUND: { status: 404, description: "Nothing waits for this answer of a listener: it was answered, or the delivery gave up waiting" },
  TOO_MANY_LISTENERS: { status: 422, description: 'The account has 5 listeners already: stop one first' },
  LISTENER_NOT_CONNECTED: { status: 503, description: 'A delivery arrived at a listener that is not asking for them (pix-api listen is not running): retried on its schedule' },
  LISTENER_NO_ANSWER: { status: 504, description: "A listener took a delivery and gave its local receiver's answer too late: retried on its schedule" },
  LOCAL_RECEIVER_REFUSED: { status: 502, description: "A listener's local receiver answered with an error status, or could not be reached: the answer carries its status" },
  AUTHORIZATION_NOT_FOUND: { status: 404, description: 'No authorization of Pix Automático asked of or held by this account has this idRec' },
  AUTHORIZATION_NOT_PENDING: { status: 422, description: 'The authorization is not PENDING (its solicitation was answered, withdrawn or expired): it is no longer approved or rejected' },
  AUTHORIZATION_NOT_ACTIVE: { status: 422, description: 'The authorization is not APPROVED: only an approved one is cancelled' },
  MAXIMUM_NOT_ALLOWED: { status: 400, description: "maximumAmount was given for a recurrence with a fixed amount: the payer's maximum is for a recurrence without one" },
  MAXIMUM_UNDER_MINIMUM: { status: 400, description: "maximumAmount is under the receiver's minimum per charge (valorMinimoRecebedor)" },
  BRCODE_NOT_RECURRENT: { status: 422, description: 'The BR Code carries no recurrence of Pix Automático: there is nothing to authorize' },
  RECURRING_CHARGE_NOT_SCHEDULED: { status: 422, description: 'The recurring charge has no attempt under way (its last one failed, and the receiver may retry it): there is nothing to cancel now' },
  RECURRENCE_NOT_APPROVABLE: { status: 422, description: "The code's recurrence cannot be approved: it is not CRIADA (already approved, rejected, expired or cancelled), or its payload is not one a payer can approve" },
  LOCATION_UNREACHABLE: { status: 422, description: "The dynamic code's location gave no payload (connection, time limit, size limit or a status other than 200)" },
  JWS_INVALID: { status: 422, description: "The location's JWS is refused: alg, jku, kid, x5t, x5c chain, root or signature, as `message` says" },
  PAYLOAD_INVALID: { status: 422, description: "The signed payload is not a charge payload a payer can pay, or not the location's charge" },
  CHARGE_EXPIRED: { status: 422, description: 'The charge is past its expiry (cob) or its last payable day (cobv) at the payment time' },
  AMOUNT_NOT_ALLOWED: { status: 422, description: "The amount differs from the code's and the code does not let the payer change it" },
  AMOUNT_REQUIRED: { status: 422, description: 'The code leaves the amount to the payer and none was sent' },

  // Sandbox controls: the test clock, faults, the inbox
  CLOCK_BACKWARDS: { status: 400, description: 'POST /sandbox/clock/advance: `to` is before the test clock\'s time; the clock only moves forward' },
  FAULT_NOT_FOUND: { status: 404, description: 'No fault has this id (it was cleared, or used up)' },
  TOO_MANY_FAULTS: { status: 409, description: 'As many faults are set as there may be at once: clear some' },
  DIRECTORY_UNAVAILABLE: { status: 503, description: 'A sandbox fault makes the directory unavailable: retry after Retry-After, or clear the fault' },

  // The sandbox's web console (/console)
  CONSOLE_REQUEST_REFUSED: { status: 403, description: "A console form or request without its session's token, or sent from another site" },
} as const satisfies Record<string, { readonly status: number; readonly description: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as ErrorCode[];

/** The codes, grouped by status, as `docs/errors.md` lists them. */
export function errorCodesMarkdown(): string {
  const lines = [
    '# Error codes',
    '',
    '<!-- Written by `npm run openapi` from src/http/error-codes.ts; CI checks it is current. -->',
    '',
    'Every error answer of the account API, the operator API and the sandbox is',
    '`{"statusCode": 422, "message": "Insufficient balance", "error": "Unprocessable Entity", "code": "INSUFFICIENT_BALANCE"}`.',
    '`code` is stable: branch on it, not on `message`, which is for people and may be reworded.',
    '',
    '| code | usual status | cause |',
    '|---|---|---|',
  ];
  const byStatus = [...ERROR_CODE_NAMES].sort((a, b) => ERROR_CODES[a].status - ERROR_CODES[b].status || a.localeCompare(b));
  for (const code of byStatus) lines.push(`| \`${code}\` | ${ERROR_CODES[code].status} | ${ERROR_CODES[code].description} |`);
  return `${lines.join('\n')}\n`;
}
