import { Type } from 'typebox';
import { ADMIN_SECURITY, IdParam } from '../../../http/schemas.ts';

/** The tag and security every operator account operation documents. */
export const common = { tags: ['Operator'], security: ADMIN_SECURITY };

export const AccountParams = Type.Object({ accountId: IdParam('Account id') });

/** The holder's address, as BCB's DadosRecebedor carries it (cobv answers and payloads). */
export const Address = Type.Object(
  {
    logradouro: Type.String({ minLength: 1, maxLength: 200 }),
    cidade: Type.String({ minLength: 1, maxLength: 200 }),
    uf: Type.String({ minLength: 2, maxLength: 2, description: 'One of the 27 UFs' }),
    cep: Type.String({ pattern: '^\\d{5}-?\\d{3}$', description: '8 digits (a hyphen after the fifth is dropped)' }),
  },
  { additionalProperties: false, description: "The holder's address: the recebedor's in BCB's cobv answers and payloads" },
);
