import type { FastifyRequest } from 'fastify';

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

/**
 * Long digit runs in a URL are documents or keys (CPF, CNPJ, phone), and a segment naming an
 * e-mail is an e-mail key: mask them. In linear time: a backtracking pattern over a 16 KiB URL of
 * one long segment cost half a second of the event loop per request.
 */
export function maskUrl(url: string): string {
  return url
    .replace(/\d{8,}/g, (digits) => `${digits.slice(0, 2)}***${digits.slice(-2)}`)
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
