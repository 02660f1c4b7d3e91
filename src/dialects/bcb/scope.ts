import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, classifyError, type ClassifiedError, type ErrorBody } from '../../http/errors.ts';
import { registerValidation } from '../../http/validation.ts';
import { BcbProblem, problem, sendProblem, type ProblemName } from './problems.ts';
import { emPortugues } from './portugues.ts';
import { violationsOf, violationsOfRules } from './violations.ts';

/** The prefix of BCB's API Pix on this service's listener. */
export const BCB_PREFIX = '/v2';

/** Whether a request URL is under `/v2` (for errors raised before routing, at the server's root). */
export const isBcbPath = (url: string) => url === BCB_PREFIX || /^\/v2[/?]/.test(url);

/**
 * A `/v2` path with a trailing slash, as PSPs' SDKs send some lists (`GET /v2/cobv/`), routed as
 * the path without it: otherwise `/v2/cobv/` would be `/v2/cobv/{txid}` with an empty txid. Other
 * paths are left as they come.
 */
export function withoutTrailingSlash(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  if (path.length <= BCB_PREFIX.length + 1 || !path.startsWith(`${BCB_PREFIX}/`) || !path.endsWith('/')) return url;
  return path.replace(/\/+$/, '') + (query === -1 ? '' : url.slice(query));
}

/**
 * The problem types of one operation, in its route's `config.bcbProblems`: a request that does
 * not match its schema, or that the core refuses as invalid (400, 409, 422), is `invalid`; a
 * missing resource is `notFound`. Without them the general types answer.
 */
export interface RouteProblems {
  readonly invalid?: ProblemName;
  readonly notFound?: ProblemName;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    bcbProblems?: RouteProblems;
  }
}

/** A seed error status, as BCB names it: BCB has no 409 or 422, so those are 400 (decision 0030). */
function nameFor(status: number, names: RouteProblems): { name: ProblemName; status: number } {
  if (status === 400 || status === 409 || status === 422) return { name: names.invalid ?? 'RequisicaoInvalida', status: 400 };
  if (status === 401 || status === 403) return { name: 'AcessoNegado', status };
  if (status === 404) return { name: names.notFound ?? 'NaoEncontrado', status };
  if (status === 410) return { name: 'PermanentementeRemovido', status };
  if (status === 503) return { name: 'ServicoIndisponivel', status };
  if (status >= 500) return { name: 'ErroInternoDoServidor', status: 500 };
  // 413, 414, 415, 429: a request BCB would call invalid, with the status HTTP gives it.
  return { name: 'RequisicaoInvalida', status };
}

/**
 * A failure of the service's own authentication (AppError 401/403: token missing, invalid or
 * expired, certificate absent or not the token's) as BCB's `AcessoNegado`; a 401 always carries
 * `WWW-Authenticate: Bearer`.
 */
export function accessDenied(error: AppError): BcbProblem {
  const status = error.statusCode === 403 ? 403 : 401;
  const challenge = error.headers?.['www-authenticate'];
  const headers = status === 401 ? { 'www-authenticate': challenge?.startsWith('Bearer') ? challenge : 'Bearer realm="pix-api"' } : undefined;
  return problem('AcessoNegado', emPortugues(error.message, error.code), { status, ...(headers ? { headers } : {}) });
}

/** Any error thrown inside `/v2`, as a problem; the classification (and its logging) is the seed's. */
export function toProblem(error: FastifyError, request: FastifyRequest): BcbProblem {
  if (error instanceof BcbProblem) return error;
  const names = request.routeOptions.config.bcbProblems ?? {};
  const classified = classifyError(error, request);
  if (error instanceof AppError && (error.statusCode === 401 || error.statusCode === 403)) return accessDenied(error);
  if (classified.validation) {
    const { errors, context } = classified.validation;
    const data = (request as unknown as Record<string, unknown>)[context === 'querystring' ? 'query' : context];
    const violacoes = violationsOf(errors, data, context);
    return problem(names.invalid ?? 'RequisicaoInvalida', `A requisição não respeita o schema (${context}): cada violação está em violacoes.`, { violacoes });
  }
  return fromClassified(classified, names, request.body, error instanceof AppError ? error : undefined);
}

/**
 * A seed error as a problem; a rule's 400 that names fields of the request lists them in
 * `violacoes` (every rule that failed, when the core checked several).
 */
function fromClassified({ body, headers }: ClassifiedError, names: RouteProblems, data?: unknown, error?: AppError): BcbProblem {
  const { name, status } = nameFor(body.statusCode, names);
  const detail = status === 500 ? 'Condição inesperada ao processar a requisição.' : emPortugues(body.message, body.code);
  const refusal = error ?? new AppError(body.statusCode, body.code, body.message);
  const violacoes = status === 400 && data !== undefined ? violationsOfRules(refusal, data) : [];
  return problem(name, detail, { status, ...(headers ? { headers } : {}), ...(violacoes.length > 0 ? { violacoes } : {}) });
}

/** A seed error built outside the error handler (before routing, at the root), as a problem. */
export function problemOfBody(body: ErrorBody): BcbProblem {
  return fromClassified({ body, headers: undefined }, {});
}

/**
 * The `/v2` scope, registered with `{ prefix: BCB_PREFIX }`: every error inside it, the
 * framework's included, answers a BCB problem, validation reports every violation at once, and
 * an unknown `/v2` route is a `NaoEncontrado` problem. The operations register inside it.
 */
export function bcbScope(...operations: FastifyPluginAsync[]): FastifyPluginAsync {
  return bcbScopeWith({}, ...operations);
}

export interface BcbScopeOptions {
  /** Runs first on every request of the scope (the account's authentication): its errors are problems too. */
  readonly onRequest?: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
}

/** `bcbScope`, with hooks that run before every operation of the scope. */
export function bcbScopeWith(options: BcbScopeOptions, ...operations: FastifyPluginAsync[]): FastifyPluginAsync {
  return async (scope: FastifyInstance) => {
    // An unknown /v2 route is NaoEncontrado, token or not: there is nothing to authorize.
    const onRequest = options.onRequest;
    if (onRequest) scope.addHook('onRequest', async (request, reply) => (request.is404 ? undefined : onRequest(request, reply)));
    registerValidation(scope, { allErrors: true });
    scope.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      sendProblem(request, reply, toProblem(error, request)),
    );
    scope.setNotFoundHandler((request, reply) => {
      void sendProblem(request, reply, problem('NaoEncontrado', `Rota ${request.method} ${request.url.split('?')[0]} não encontrada.`));
    });
    for (const operation of operations) await scope.register(operation);
  };
}
