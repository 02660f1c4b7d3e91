import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AccountsDeps } from '../../accounts/service.ts';
import { adminCreateAccountRoute } from './create-account.ts';
import { adminUpdateAccountRoute } from './update-account.ts';
import { adminLinkCertificateRoute } from './link-certificate.ts';
import { adminRegisterPixKeyRoute } from './register-pix-key.ts';
import { adminRotateClientSecretRoute } from './rotate-client-secret.ts';
import { adminUnlinkCertificateRoute } from './unlink-certificate.ts';

/** The operator's account operations, in the order the OpenAPI document lists them. */
export const adminRoutes =
  (deps: AccountsDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    adminCreateAccountRoute(app, deps);
    adminLinkCertificateRoute(app, deps);
    adminUnlinkCertificateRoute(app, deps);
    adminRegisterPixKeyRoute(app, deps);
    adminRotateClientSecretRoute(app, deps);
    adminUpdateAccountRoute(app, deps);
  };
