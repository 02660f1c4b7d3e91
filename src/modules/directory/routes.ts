import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, Nullable, StringEnum } from '../../http/schemas.ts';
import { lookUpKey, type DirectoryDeps } from './service.ts';
import { accountSecurity } from '../auth/scopes.ts';

const KeyEntry = Type.Object({
  key: Type.String({ description: 'The key as the directory holds it (e-mails in lower case)' }),
  type: StringEnum(['cpf', 'cnpj', 'email', 'phone', 'evp'] as const),
  owner: Type.Object({
    name: Type.String({ description: "The key owner's name" }),
    document: Type.String({ description: 'CPF `***.456.789-**` or CNPJ `12.345.678/****-**`, masked' }),
  }),
  institution: Type.Object({
    ispb: Type.String({ description: 'ISPB of the institution holding the account' }),
    name: Nullable(Type.String({ description: 'Its name, when the directory has it' })),
  }),
});

export const directoryRoutes =
  (deps: DirectoryDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/dict/keys/:key',
      {
        schema: {
          operationId: 'getPixKey',
          tags: ['Directory'],
          summary: 'Look up a PIX key before paying it',
          description:
            "The key's owner (name, masked document) and institution, as a payment app shows them before paying. A directory " +
            "look-up, limited per account like those of `POST /dict/pix`: 429 with `Retry-After` when the account's look-ups " +
            'are spent, and a key not in the directory costs more than one that is.',
          security: accountSecurity('dict.read'),
          params: Type.Object({ key: Type.String({ description: 'CPF, CNPJ, e-mail, +55 phone or EVP (URL-encoded)' }) }),
          response: { 200: KeyEntry, ...errorResponses(400, 401, 404, 429) },
        },
      },
      async (request) => lookUpKey(deps, request.accountId, request.params.key),
    );
  };
