import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/client.ts';
import { ADMIN_SECURITY, errorResponses, Nullable, StringEnum, Timestamp } from '../../http/schemas.ts';
import type { KeyEncryptionKey } from '../auth/key-encryption.ts';
import { SIGNING_KEY_CACHE_TTL_MS } from '../auth/key-ring.ts';
import { listSigningKeys, MAX_LISTED_KEYS, retireSigningKey, rotateSigningKey } from '../auth/signing-keys.ts';

export interface SigningKeyRoutesDeps {
  readonly db: Db;
  readonly kek: KeyEncryptionKey;
  /** Told after a rotation or a retirement, so this process applies it at once. */
  readonly onSigningKeysChanged: () => void;
}

const SigningKey = Type.Object({
  kid: Type.String({ description: 'Key id: the JWK thumbprint (RFC 7638), the `kid` of the tokens it signs' }),
  algorithm: Type.String({ description: 'JWS algorithm (EdDSA)' }),
  status: StringEnum(['signing', 'verifying', 'retired'] as const, {
    description: 'signing: the newest active key, which signs new tokens; verifying: active, still accepted; retired: neither',
  }),
  createdAt: Timestamp(),
  retiredAt: Nullable(Timestamp()),
});

const seconds = SIGNING_KEY_CACHE_TTL_MS / 1000;

export const signingKeyRoutes =
  (deps: SigningKeyRoutesDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    const common = { tags: ['Operator'], security: ADMIN_SECURITY };

    app.get(
      '/admin/signing-keys',
      {
        schema: {
          ...common,
          operationId: 'adminListSigningKeys',
          summary: 'List the keys that sign access tokens',
          description: `Newest first, at most ${MAX_LISTED_KEYS}.`,
          response: { 200: Type.Object({ data: Type.Array(SigningKey) }), ...errorResponses(401, 429) },
        },
      },
      async () => ({ data: await listSigningKeys(deps.db) }),
    );

    app.post(
      '/admin/signing-keys',
      {
        schema: {
          ...common,
          operationId: 'adminRotateSigningKey',
          summary: 'Rotate: a new key signs from now on',
          description: `Every process signs with the new key within ${seconds} s; the previous keys still verify until retired.`,
          response: { 201: SigningKey, ...errorResponses(401, 429) },
        },
      },
      async (_request, reply) => {
        const created = await rotateSigningKey(deps.db, deps.kek);
        deps.onSigningKeysChanged();
        return reply.status(201).send(created);
      },
    );

    app.post(
      '/admin/signing-keys/:kid/retire',
      {
        schema: {
          ...common,
          operationId: 'adminRetireSigningKey',
          summary: 'Retire a key: it neither signs nor verifies',
          description:
            `Tokens it signed are refused by every process within ${seconds} s. The only active key cannot be retired (409): rotate first. ` +
            'Retiring a retired key answers it as it is.',
          params: Type.Object({ kid: Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$' }) }),
          response: { 200: SigningKey, ...errorResponses(400, 401, 404, 409, 429) },
        },
      },
      async (request) => {
        const retired = await retireSigningKey(deps.db, request.params.kid);
        deps.onSigningKeysChanged();
        return retired;
      },
    );
  };
