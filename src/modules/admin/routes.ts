import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ADMIN_SECURITY, errorResponses, IdParam } from '../../http/schemas.ts';
import {
  createAccount,
  linkCertificate,
  registerPixKey,
  rotateClientSecret,
  unlinkCertificate,
  type AccountsDeps,
} from '../accounts/service.ts';

const AccountParams = Type.Object({ accountId: IdParam('Account id') });
const Credentials = Type.Object({ clientId: Type.String(), clientSecret: Type.String({ description: 'Shown only in this answer' }) });

export const adminRoutes =
  (deps: AccountsDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['Operator'], security: ADMIN_SECURITY };

    app.post(
      '/admin/accounts',
      {
        schema: {
          ...common,
          operationId: 'adminCreateAccount',
          summary: 'Create an account',
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: 140 }),
              document: Type.String({ minLength: 11, maxLength: 18, description: 'CPF or CNPJ (digits, punctuation allowed)' }),
            },
            { additionalProperties: false },
          ),
          response: {
            201: Type.Object({
              accountId: Type.Integer(),
              branch: Type.String(),
              accountNumber: Type.String(),
              clientId: Type.String(),
              clientSecret: Type.String({ description: 'Shown only in this answer' }),
            }),
            ...errorResponses(400, 401),
          },
        },
      },
      async (request, reply) => {
        const created = await createAccount(deps, request.body);
        return reply.status(201).send({ ...created, accountId: Number(created.accountId) });
      },
    );

    app.post(
      '/admin/accounts/:accountId/certificates',
      {
        schema: {
          ...common,
          operationId: 'adminLinkCertificate',
          summary: 'Link a client certificate to an account',
          params: AccountParams,
          body: Type.Object({ pem: Type.String({ minLength: 1, maxLength: 16384, description: 'PEM text' }) }, { additionalProperties: false }),
          response: {
            201: Type.Object({ fingerprint: Type.String({ description: 'SHA-256 of the DER, lowercase hex' }) }),
            ...errorResponses(400, 401, 404, 409),
          },
        },
      },
      async (request, reply) => reply.status(201).send(await linkCertificate(deps, BigInt(request.params.accountId), request.body.pem)),
    );

    app.delete(
      '/admin/accounts/:accountId/certificates/:fingerprint',
      {
        schema: {
          ...common,
          operationId: 'adminUnlinkCertificate',
          summary: 'Unlink a certificate; tokens bound to it stop working',
          params: Type.Object({ accountId: IdParam('Account id'), fingerprint: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }) }),
          response: { 204: Type.Null(), ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => {
        await unlinkCertificate(deps, BigInt(request.params.accountId), request.params.fingerprint);
        return reply.status(204).send(null);
      },
    );

    app.post(
      '/admin/accounts/:accountId/pix-keys',
      {
        schema: {
          ...common,
          operationId: 'adminRegisterPixKey',
          summary: 'Register a Pix key of the account in the directory',
          params: AccountParams,
          body: Type.Object(
            {
              type: Type.Union([Type.Literal('cpf'), Type.Literal('cnpj'), Type.Literal('email'), Type.Literal('phone'), Type.Literal('evp')]),
              key: Type.Optional(Type.String({ minLength: 1, maxLength: 77, description: 'Omit for evp (generated); cpf/cnpj default to the holder document' })),
            },
            { additionalProperties: false },
          ),
          response: { 201: Type.Object({ key: Type.String(), type: Type.String() }), ...errorResponses(400, 401, 404, 409, 422) },
        },
      },
      async (request, reply) => reply.status(201).send(await registerPixKey(deps, BigInt(request.params.accountId), request.body)),
    );

    app.post(
      '/admin/accounts/:accountId/client-secret',
      {
        schema: {
          ...common,
          operationId: 'adminRotateClientSecret',
          summary: 'Rotate the client secret',
          params: AccountParams,
          response: { 201: Credentials, ...errorResponses(400, 401, 404) },
        },
      },
      async (request, reply) => reply.status(201).send(await rotateClientSecret(deps, BigInt(request.params.accountId))),
    );
  };
