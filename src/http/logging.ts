import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

/**
 * Log redaction: tokens, secrets, certificates and documents never reach the logs. Bodies are
 * not logged at all; these paths cover what handlers log on purpose.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-ssl-client-cert"]',
  'req.headers.cookie',
  '*.clientSecret',
  '*.client_secret',
  '*.access_token',
  '*.accessToken',
  '*.token',
  '*.secret',
  '*.pem',
  '*.privateKey',
  '*.document',
  '*.cpf',
  '*.cnpj',
  '*.creditorDocument',
  'context.document',
];

/** EVP keys (UUIDs), and CPFs and CNPJs written with their punctuation (`%2F` for the slash too). */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const PUNCTUATED_CPF = /\d{3}\.\d{3}\.\d{3}-?\d{2}/g;
const PUNCTUATED_CNPJ = /[0-9A-Z]{2}\.?[0-9A-Z]{3}\.?[0-9A-Z]{3}(?:\/|%2F)[0-9A-Z]{4}-?\d{2}/gi;
const keep = (text: string) => `${text.slice(0, 2)}***${text.slice(-2)}`;

/**
 * Keys and documents in a URL are masked: long digit runs (CPF, CNPJ, phone), EVP keys, CPFs and
 * CNPJs with their dots, and a segment naming an e-mail. In linear time: a backtracking pattern
 * held the event loop on a long URL of one segment, for every such request (test/hostile.test.ts).
 */
export function maskUrl(url: string): string {
  return url
    .replace(UUID, keep)
    .replace(PUNCTUATED_CNPJ, keep)
    .replace(PUNCTUATED_CPF, keep)
    .replace(/\d{8,}/g, keep)
    .split(/([/?&])/)
    .map((part) => {
      const at = part.search(/@|%40/);
      const start = part.lastIndexOf('=', at) + 1;
      return at > start ? `${part.slice(0, start)}***@***` : part;
    })
    .join('');
}

export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: maskUrl(request.url),
          remoteAddress: request.ip,
        };
      },
    },
  };
}

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = Parameters<FastifyBaseLogger['info']>;

/**
 * Fastify gives every request a child logger bound to its id. A pino child is not cheap with
 * redaction configured (the redaction's wildcard paths run over the bindings), and most
 * requests never log at the configured level. This one
 * makes the child on the first message that would be written; until then a message below the
 * level costs one comparison. What reaches the log is the real child's output, redacted alike.
 * Why, and what was measured: docs/decisions/0024-request-path-costs.md.
 */
class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): FastifyBaseLogger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  #log(level: Level, args: LogArgs): void {
    if (this.#child === undefined && (this.#parent as unknown as Logger).isLevelEnabled?.(level) === false) return;
    (this.#real()[level] as (...a: LogArgs) => void)(...args);
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }
  set level(level: string) {
    this.#real().level = level;
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
  fatal(...args: LogArgs) {
    this.#log('fatal', args);
  }
  error(...args: LogArgs) {
    this.#log('error', args);
  }
  warn(...args: LogArgs) {
    this.#log('warn', args);
  }
  info(...args: LogArgs) {
    this.#log('info', args);
  }
  debug(...args: LogArgs) {
    this.#log('debug', args);
  }
  trace(...args: LogArgs) {
    this.#log('trace', args);
  }
  silent() {}
}

export function lazyChildLogger(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // A route's own log level changes what is enabled: that child is made at once.
  if (options.level !== undefined) return parent.child(bindings, options);
  return new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;
}
