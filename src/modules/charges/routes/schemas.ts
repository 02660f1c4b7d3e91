import { Type } from 'typebox';
import { Timestamp } from '../../../http/schemas.ts';
import { accountSecurity } from '../../auth/scopes.ts';

/** The tag and security of the operations that change charges, and of those that read them. */
export const write = { tags: ['Charges'], security: accountSecurity('cob.write') };
export const read = { tags: ['Charges'], security: accountSecurity('cob.read') };

const TXID_PATTERN = '^[a-zA-Z0-9]{26,35}$';
export const TxidParams = Type.Object({ txid: Type.String({ pattern: TXID_PATTERN, description: 'Charge id: 26 to 35 characters of [a-zA-Z0-9]' }) });
export const Status = Type.Union([
  Type.Literal('ATIVA'),
  Type.Literal('CONCLUIDA'),
  Type.Literal('REMOVIDA_PELO_USUARIO_RECEBEDOR'),
  Type.Literal('REMOVIDA_PELO_PSP'),
]);
export const Cpf = Type.String({ pattern: '^[0-9]{11}$', description: 'CPF, 11 digits' });
export const Cnpj = Type.String({ pattern: '^[0-9A-Z]{12}[0-9]{2}$', description: 'CNPJ, 14 characters (alphanumeric CNPJ included)' });
const Original = Type.String({ pattern: '^[0-9]{1,10}\\.[0-9]{2}$', description: 'Amount, a decimal string with 2 places greater than 0: "10.00"' });
const InfoAdicional = Type.Object({ nome: Type.String({ minLength: 1, maxLength: 50 }), valor: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/** The fields of PUT /cob/{txid} and POST /cob; in PATCH every one is optional and must change something. */
const chargeFields = (revision: boolean) => {
  const some = revision ? { minProperties: 1 } : {};
  const original = revision ? Type.Optional(Original) : Original;
  const calendario = Type.Object(
    { expiracao: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Seconds of validity from creation (default 86400)' })) },
    { additionalProperties: false, ...some },
  );
  const valor = Type.Object(
    {
      original,
      modalidadeAlteracao: Type.Optional(Type.Integer({ minimum: 0, maximum: 1, description: '1: the payer may change the amount (default 0)' })),
    },
    { additionalProperties: false, ...some },
  );
  return {
    calendario: revision ? Type.Optional(calendario) : calendario,
    devedor: Type.Optional(
      Type.Object(
        { cpf: Type.Optional(Cpf), cnpj: Type.Optional(Cnpj), nome: Type.String({ minLength: 1, maxLength: 200 }) },
        { additionalProperties: false, description: 'The payer: nome and exactly one of cpf or cnpj' },
      ),
    ),
    valor: revision ? Type.Optional(valor) : valor,
    chave: Type.Optional(Type.String({ minLength: 1, maxLength: 77, description: "One of the account's PIX keys (default: its oldest)" })),
    solicitacaoPagador: Type.Optional(Type.String({ maxLength: 140, description: 'Text shown to the payer' })),
    infoAdicionais: Type.Optional(Type.Array(InfoAdicional, { maxItems: 50 })),
  };
};

export const ChargeBody = Type.Object(chargeFields(false), { additionalProperties: false });
export const RevisionBody = Type.Object(
  {
    ...chargeFields(true),
    status: Type.Optional(Type.Literal('REMOVIDA_PELO_USUARIO_RECEBEDOR', { description: 'Cancels the charge' })),
  },
  { additionalProperties: false },
);

export const Charge = Type.Object({
  calendario: Type.Object({ criacao: Timestamp('Creation time'), expiracao: Type.Integer({ description: 'Seconds of validity' }) }),
  txid: Type.String(),
  revisao: Type.Integer({ description: 'Revision: 0 on creation, +1 on every change' }),
  loc: Type.Object({ id: Type.Integer(), location: Type.String({ description: 'The BR Code (copy-and-paste payload)' }), tipoCob: Type.Literal('cob') }),
  location: Type.String({ description: 'Same as loc.location' }),
  status: Status,
  devedor: Type.Optional(Type.Object({ cpf: Type.Optional(Type.String()), cnpj: Type.Optional(Type.String()), nome: Type.String() })),
  valor: Type.Object({ original: Type.String(), modalidadeAlteracao: Type.Integer() }),
  chave: Type.String(),
  solicitacaoPagador: Type.Optional(Type.String()),
  infoAdicionais: Type.Optional(Type.Array(Type.Object({ nome: Type.String(), valor: Type.String() }))),
  pixCopiaECola: Type.String({ description: 'Same BR Code' }),
  pix: Type.Optional(
    Type.Array(Type.Object({ endToEndId: Type.String(), txid: Type.String(), valor: Type.String(), horario: Timestamp('Time of the payment') }), {
      description: 'The payment that concluded the charge',
    }),
  ),
});
