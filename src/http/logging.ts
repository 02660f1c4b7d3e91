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

/** Long digit runs in a URL are documents or keys (CPF, CNPJ, phone): mask them. */
export function maskUrl(url: string): string {
  return url.replace(/\d{8,}/g, (digits) => `${digits.slice(0, 2)}***${digits.slice(-2)}`).replace(/[^/?&=]+%40[^/?&]+|[^/?&=]+@[^/?&]+/g, '***@***');
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
