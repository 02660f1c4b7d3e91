import type { OperationExamples } from '../../../http/openapi-examples.ts';

const ID_REC = 'RN9999999920261124abcdefghijk';
const ID = 'SC9999999920261124abcdefghijk';
const body = {
  idRec: ID_REC,
  calendario: { dataExpiracaoSolicitacao: '2026-12-01T12:17:11.926Z' },
  destinatario: { agencia: '2569', conta: '550689', cpf: '45164632481', ispbParticipante: '12345678' },
};
const recPayload = {
  idRec: ID_REC,
  vinculo: { objeto: 'Plano mensal da academia', contrato: '63100862', devedor: { cpf: '45164632481', nome: 'Fulano de Tal' } },
  calendario: { dataInicial: '2026-12-05', periodicidade: 'MENSAL' },
  valor: { valorRec: '99.90' },
  politicaRetentativa: 'NAO_PERMITE',
  recebedor: { cnpj: '12345678000195', nome: 'Academia Forte', ispbParticipante: '99999999' },
  atualizacao: [{ status: 'CRIADA', data: '2026-11-24T12:40:02.050Z' }],
};
const made = { idSolicRec: ID, ...body, status: 'CRIADA', atualizacao: [{ status: 'CRIADA', data: '2026-11-24T12:41:00.000Z' }], recPayload };
const accepted = {
  ...made,
  status: 'ACEITA',
  atualizacao: [
    ...made.atualizacao,
    { status: 'ENVIADA', data: '2026-11-24T12:41:01.000Z' },
    { status: 'RECEBIDA', data: '2026-11-24T12:41:02.000Z' },
    { status: 'ACEITA', data: '2026-11-24T12:42:02.000Z' },
  ],
};
const cancelled = { ...made, status: 'CANCELADA', atualizacao: [...made.atualizacao, { status: 'CANCELADA', data: '2026-11-24T12:41:00.500Z' }] };
const problems = { 400: 'SolicRecOperacaoInvalida', 404: 'SolicRecNaoEncontrada' } as const;

/** The examples of BCB's `solicrec` operations. */
export const SOLICREC_EXAMPLES: Record<string, OperationExamples> = {
  bcbPostSolicRec: { body, responses: { 201: made }, problems: { 400: 'SolicRecOperacaoInvalida' } },
  bcbGetSolicRec: { params: { idSolicRec: ID }, responses: { 200: accepted }, problems: { 404: 'SolicRecNaoEncontrada' } },
  bcbPatchSolicRec: { params: { idSolicRec: ID }, body: { status: 'CANCELADA' }, responses: { 201: cancelled }, problems },
};
