import { Type } from 'typebox';
import { ADMIN_SECURITY } from '../../../http/schemas.ts';

/** The tag and security every sandbox operation documents. */
export const common = { tags: ['Sandbox'], security: ADMIN_SECURITY };

export const Decimal2 = (description: string) => Type.String({ pattern: '^[0-9]{1,16}\\.[0-9]{2}$', description });
export const Name = Type.String({ minLength: 1, maxLength: 140 });
export const DocumentField = Type.String({ minLength: 11, maxLength: 18, description: 'CPF or CNPJ' });
export const Ispb = Type.String({ pattern: '^[0-9]{8}$' });
export const Movement = Type.Object({ endToEndId: Type.String(), transactionId: Type.Integer() });
