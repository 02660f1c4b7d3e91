import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  preValidationAsyncHookHandler,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
} from 'fastify';
import type { TSchema } from 'typebox';
import type { RouteApp } from '../../http/route-app.ts';
import type { Scope } from '../../modules/auth/scopes.ts';
import { problemResponses } from './problems.ts';
import { bcbSecurity } from './schemas.ts';
import type { RouteProblems } from './scope.ts';

/** The parts of a request an operation validates. */
interface RequestSchema {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
}

/**
 * One operation of BCB's API Pix as its route file states it: what BCB names it (tag, scope,
 * operationId, summary), what it takes, what it answers and which problem types stand for an
 * invalid request and a missing resource. The route, its OpenAPI entry and its scope check are
 * built from this one statement.
 */
export interface BcbOperation<S extends RequestSchema, Status extends number, Answer extends TSchema> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  tags: string[];
  scope: Scope;
  operationId: string;
  summary: string;
  description?: string;
  request?: S;
  /** The success status and its schema. */
  answers: readonly [Status, Answer];
  /** The statuses of the problems it may answer. */
  problems: readonly number[];
  errors: RouteProblems;
  /** A hook that adjusts the request before its schema validates it. */
  preValidation?: preValidationAsyncHookHandler;
  /** The largest body it takes, in bytes, when not the server's. */
  bodyLimit?: number;
}

type Schema<S extends RequestSchema, Status extends number, Answer extends TSchema> = S & { response: Record<Status, Answer> };

export type BcbHandler<S extends RequestSchema, Status extends number, Answer extends TSchema> = RouteHandlerMethod<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  RouteGenericInterface,
  ContextConfigDefault,
  Schema<S, Status, Answer>,
  TypeBoxTypeProvider
>;

/** Adds one BCB operation to the `/v2` scope. */
export function bcbOperation<const S extends RequestSchema, const Status extends number, const Answer extends TSchema>(
  app: RouteApp,
  op: BcbOperation<S, Status, Answer>,
  handler: BcbHandler<S, Status, Answer>,
): void {
  const [status, answer] = op.answers;
  const schema = {
    tags: op.tags,
    security: bcbSecurity(op.scope),
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description === undefined ? {} : { description: op.description }),
    ...op.request,
    response: { [status]: answer, ...problemResponses(...op.problems) },
  };
  app.route({
    method: op.method,
    url: op.url,
    schema,
    ...(op.bodyLimit === undefined ? {} : { bodyLimit: op.bodyLimit }),
    config: { bcbProblems: op.errors },
    ...(op.preValidation === undefined ? {} : { preValidation: op.preValidation }),
    handler: handler as never,
  });
}
