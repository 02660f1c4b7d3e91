import { Type } from 'typebox';
import { ADMIN_SECURITY, IdParam } from '../../../http/schemas.ts';

/** The tag and security every operator account operation documents. */
export const common = { tags: ['Operator'], security: ADMIN_SECURITY };

export const AccountParams = Type.Object({ accountId: IdParam('Account id') });
