import type { FastifyRequest } from 'fastify';
import { AppError } from '../../http/errors.ts';

/**
 * BCB's OAuth scopes (the `securitySchemes` of the API Pix), without Pix Automático's (rec,
 * solicrec, cobr, locrec and their webhooks), which this service does not offer.
 */
export const PIX_SCOPES = [
  'cob.write',
  'cob.read',
  'cobv.write',
  'cobv.read',
  'lotecobv.write',
  'lotecobv.read',
  'pix.write',
  'pix.read',
  'webhook.write',
  'webhook.read',
  'payloadlocation.write',
  'payloadlocation.read',
] as const;

export type PixScope = (typeof PIX_SCOPES)[number];

const KNOWN: ReadonlySet<string> = new Set(PIX_SCOPES);
export const isPixScope = (scope: string): scope is PixScope => KNOWN.has(scope);

/** The scopes a client holds: those an operator limited it to, else all of them, in the list's order. */
export function heldScopes(limited: readonly string[] | null): PixScope[] {
  if (limited === null) return [...PIX_SCOPES];
  const held = new Set(limited);
  return PIX_SCOPES.filter((scope) => held.has(scope));
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The scopes of the access token; set by the bearer-token hook on account routes. */
    tokenScopes: ReadonlySet<string>;
  }
}

/** A valid token without the scope an operation requires: 403. */
export class ScopeDenied extends AppError {
  override name = 'ScopeDenied';
  readonly scope: string;
  constructor(scope: string) {
    super(403, 'SCOPE_NOT_GRANTED', `The access token does not carry the scope ${scope}`);
    this.scope = scope;
  }
}

export interface RequireScopeOptions {
  /** The error to throw when the token lacks the scope; a dialect (the /v2 problems) renders its own. Default: ScopeDenied. */
  readonly denied?: (scope: string) => Error;
}

/**
 * A preHandler for an operation that requires a scope (`preHandler: requireScope('cob.write')`),
 * run after the bearer-token hook has set the token's scopes. Root paths require none.
 */
export function requireScope(scope: PixScope, options: RequireScopeOptions = {}) {
  const denied = options.denied ?? ((s: string) => new ScopeDenied(s));
  return async function checkScope(request: FastifyRequest): Promise<void> {
    if (!request.tokenScopes?.has(scope)) throw denied(scope);
  };
}
