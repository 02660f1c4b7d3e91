import type { FastifyInstance, FastifyRequest, FastifySchema, preHandlerHookHandler } from 'fastify';
import { AppError } from '../../http/errors.ts';

/**
 * The OAuth scopes an access token may carry, each with what it allows. BCB's (the
 * `securitySchemes` of the API Pix, Pix Automático's as its operations are served)
 * guard `/v2` and the root routes they fit; the service's own guard the root routes BCB has no
 * scope for. A client holds every one unless an operator limits it.
 */
export const SCOPE_DESCRIPTIONS = {
  'cob.write': 'BCB: create and change immediate charges (/v2/cob, and /cob at the root)',
  'cob.read': 'BCB: read immediate charges and their QR codes (/v2/cob, /cob)',
  'cobv.write': 'BCB: create and change due-date charges (/v2/cobv)',
  'cobv.read': 'BCB: read due-date charges (/v2/cobv)',
  'lotecobv.write': 'BCB: create and change batches of due-date charges (/v2/lotecobv)',
  'lotecobv.read': 'BCB: read batches of due-date charges (/v2/lotecobv)',
  'pix.write': 'BCB: request refunds of received Pix (/v2/pix/{e2eid}/devolucao, /pix/{e2eid}/devolucao)',
  'pix.read': 'BCB: read received Pix and their refunds (/v2/pix, /pix/{e2eid}/devolucao)',
  'webhook.write': "BCB: register and remove webhooks (/v2/webhook, and the root's /api/webhooks), and resend a delivery",
  'webhook.read': "BCB: read webhooks (/v2/webhook, /api/webhooks) and the root's delivery log",
  'payloadlocation.write': 'BCB: create and unlink payload locations (/v2/loc)',
  'payloadlocation.read': 'BCB: read payload locations and their QR codes (/v2/loc)',
  'payloadlocationrec.write': "BCB: create payload locations of recurrences and unlink their recurrence (/v2/locrec)",
  'payloadlocationrec.read': 'BCB: read payload locations of recurrences (/v2/locrec)',
  'rec.write': 'BCB: create, revise and cancel recurrences of Pix Automático (/v2/rec)',
  'rec.read': 'BCB: read recurrences and their QR codes (/v2/rec)',
  'solicrec.write': "BCB: send a payer a recurrence to approve, and cancel the solicitation (/v2/solicrec)",
  'solicrec.read': 'BCB: read solicitations of recurrences (/v2/solicrec)',
  'cobr.write': 'BCB: create and cancel recurring charges, and ask for their retries (/v2/cobr)',
  'cobr.read': 'BCB: read recurring charges with their attempts (/v2/cobr)',
  'webhookrec.write': 'BCB: register and remove the webhook of recurrences (/v2/webhookrec)',
  'webhookrec.read': 'BCB: read the webhook of recurrences (/v2/webhookrec)',
  'webhookcobr.write': 'BCB: register and remove the webhook of recurring charges (/v2/webhookcobr)',
  'webhookcobr.read': 'BCB: read the webhook of recurring charges (/v2/webhookcobr)',
  'pix.send': 'Send a Pix from the account (POST /dict/pix)',
  'balance.read': "Read the account's balances (/balance, /accounts/balances)",
  'transactions.read': "Read the account's transactions and the MEDs opened against them (/api/transactions, /api/pix/..., /api/meds)",
  'dict.read': "Look up a Pix key in the directory on the holder's behalf (/dict/keys/{key})",
  'webhooksecret.read': 'Read the secret that signs the root webhooks (/api/webhooks/signing-secret)',
  'webhooksecret.write': 'Rotate that secret (/api/webhooks/signing-secret/rotate)',
} as const satisfies Record<string, string>;

export type Scope = keyof typeof SCOPE_DESCRIPTIONS;

/** Every scope, BCB's first, in the order tokens list them. */
export const SCOPES = Object.keys(SCOPE_DESCRIPTIONS) as Scope[];

/** The service's own scopes, for what BCB has none of. */
export const SERVICE_SCOPES: readonly Scope[] = ['pix.send', 'balance.read', 'transactions.read', 'dict.read', 'webhooksecret.read', 'webhooksecret.write'];

const KNOWN: ReadonlySet<string> = new Set(SCOPES);
export const isScope = (scope: string): scope is Scope => KNOWN.has(scope);

/** The scopes a client holds: those an operator limited it to, else all of them, in the list's order. */
export function heldScopes(limited: readonly string[] | null): Scope[] {
  if (limited === null) return [...SCOPES];
  const held = new Set(limited);
  return SCOPES.filter((scope) => held.has(scope));
}

/**
 * The scopes a request may use: those its token carries that the client still holds, so that an
 * operator's narrowing reaches tokens issued before it (read on each request, through the
 * certificate link cache: within seconds in every process).
 */
export function effectiveScopes(granted: ReadonlySet<string>, held: readonly string[] | null): ReadonlySet<string> {
  if (held === null) return granted;
  const still = new Set(held);
  return new Set([...granted].filter((scope) => still.has(scope)));
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The scopes the request may use; set by the bearer-token hook on account routes. */
    tokenScopes: ReadonlySet<string>;
  }
}

/** A valid token without the scope an operation requires: 403 (a `/v2` problem names it AcessoNegado). */
export class ScopeDenied extends AppError {
  override name = 'ScopeDenied';
  readonly scope: string;
  constructor(scope: string) {
    super(403, 'SCOPE_NOT_GRANTED', `The access token does not carry the scope ${scope}`);
    this.scope = scope;
  }
}

/** A preHandler that requires `scope` of the request's token, once the bearer-token hook has run. */
export function requireScope(scope: Scope): preHandlerHookHandler {
  return async function checkScope(request: FastifyRequest): Promise<void> {
    if (!request.tokenScopes?.has(scope)) throw new ScopeDenied(scope);
  };
}

/** The `security` of an account route that requires `scope`, in the OpenAPI document. */
export const accountSecurity = (scope: Scope) => [{ bearerAuth: [scope] }];

/** The scope a route's schema declares in its `security` (either scheme), if it declares one. */
export function declaredScope(schema: FastifySchema | undefined): Scope | undefined {
  const security = (schema as { security?: Record<string, string[]>[] } | undefined)?.security;
  const named = security?.flatMap((requirement) => Object.values(requirement).flat())[0];
  return named !== undefined && isScope(named) ? named : undefined;
}

/**
 * Every route registered in `app` from now on (its plugins' included) requires the scope its
 * schema's `security` declares, and one that declares none is refused at start: the document
 * and the check are the same words, and no account route ships without a scope.
 */
export function requireDeclaredScopes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const scope = declaredScope(route.schema);
    if (scope === undefined) throw new Error(`${route.method} ${route.url}: an account route must declare the scope it requires in schema.security`);
    const check = requireScope(scope);
    const others = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
    route.preHandler = [check, ...others];
  });
}
