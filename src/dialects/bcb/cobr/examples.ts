import { examplePage } from '../../../http/example-page.ts';
import type { OperationExamples } from '../../../http/openapi-examples.ts';

const ID_REC = 'RR9999999920261124abcdefghijk';
const TXID = '3136957d93134f2184b369e8f1c0729d';
const E2E = 'E12345678202612150300abcdef12345';
const body = {
  idRec: ID_REC,
  infoAdicional: 'Mensalidade de dezembro',
  calendario: { dataDeVencimento: '2026-12-15' },
  valor: { original: '99.90' },
  ajusteDiaUtil: true,
  devedor: { email: 'fulano@example.com', logradouro: 'Alameda Franco 1056', cidade: 'Recife', uf: 'PE', cep: '50000-000' },
  recebedor: { agencia: '0001', conta: '00000001-9', tipoConta: 'CORRENTE' },
};
const created = {
  idRec: ID_REC,
  txid: TXID,
  infoAdicional: body.infoAdicional,
  calendario: { criacao: '2026-12-07', dataDeVencimento: '2026-12-15' },
  valor: body.valor,
  status: 'CRIADA',
  politicaRetentativa: 'PERMITE_3R_7D',
  ajusteDiaUtil: true,
  devedor: body.devedor,
  recebedor: { cnpj: '12345678000195', nome: 'Academia Forte', ...body.recebedor },
  atualizacao: [{ status: 'CRIADA', data: '2026-12-07T14:47:29.470Z' }],
};
const tentativa = (status: string, history: string[]) => ({
  dataLiquidacao: '2026-12-15',
  tipo: 'AGND',
  status,
  endToEndId: E2E,
  atualizacao: history.map((s, i) => ({ status: s, data: ['2026-12-07T14:47:29.470Z', '2026-12-07T14:48:29.470Z', '2026-12-15T03:00:00.000Z'][i]! })),
});
const paid = {
  ...created,
  status: 'CONCLUIDA',
  atualizacao: [...created.atualizacao, { status: 'ATIVA', data: '2026-12-07T14:48:29.470Z' }, { status: 'CONCLUIDA', data: '2026-12-15T03:00:00.000Z' }],
  tentativas: [tentativa('PAGA', ['SOLICITADA', 'AGENDADA', 'PAGA'])],
  pix: [{ endToEndId: E2E, txid: TXID, valor: '99.90', horario: '2026-12-15T03:00:00.000Z' }],
};
const cancelled = {
  ...created,
  status: 'CANCELADA',
  atualizacao: [...created.atualizacao, { status: 'CANCELADA', data: '2026-12-10T10:18:20.120Z' }],
  encerramento: { cancelamento: { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR', descricao: 'Cancelamento de agendamento solicitado pelo usuário recebedor' } },
};
const retried = {
  ...created,
  status: 'ATIVA',
  atualizacao: [...created.atualizacao, { status: 'ATIVA', data: '2026-12-07T14:48:29.470Z' }],
  tentativas: [
    tentativa('EXPIRADA', ['SOLICITADA', 'AGENDADA', 'EXPIRADA']),
    { dataLiquidacao: '2026-12-18', tipo: 'NTAG', status: 'SOLICITADA', endToEndId: 'E12345678202612180300abcdef12346', atualizacao: [{ status: 'SOLICITADA', data: '2026-12-16T09:00:00.000Z' }] },
  ],
};
const problems = { 400: 'CobROperacaoInvalida', 404: 'CobRNaoEncontrado' } as const;

/** The examples of BCB's `cobr` operations. */
export const COBR_EXAMPLES: Record<string, OperationExamples> = {
  bcbPutCobR: { params: { txid: TXID }, body, responses: { 201: created }, problems },
  bcbPostCobR: { body, responses: { 201: created }, problems: { 400: 'CobROperacaoInvalida' } },
  bcbGetCobR: { params: { txid: TXID }, responses: { 200: paid }, problems: { 404: 'CobRNaoEncontrado' } },
  bcbPatchCobR: { params: { txid: TXID }, body: { status: 'CANCELADA' }, responses: { 200: cancelled }, problems },
  bcbListCobR: {
    params: { inicio: '2026-12-01T00:00:00Z', fim: '2026-12-31T23:59:59Z', idRec: ID_REC },
    responses: { 200: examplePage({ inicio: '2026-12-01T00:00:00.000Z', fim: '2026-12-31T23:59:59.000Z', idRec: ID_REC }, 'cobsr', [paid]) },
    problems: { 400: 'CobRConsultaInvalida' },
  },
  bcbPostCobRRetentativa: { params: { txid: TXID, data: '2026-12-18' }, responses: { 201: retried }, problems },
};
