import { examplePage } from '../../../http/example-page.ts';
import type { OperationExamples } from '../../../http/openapi-examples.ts';

const ID_REC = 'RN9999999920261124abcdefghijk';
const body = {
  vinculo: { objeto: 'Plano mensal da academia', contrato: '63100862', devedor: { cpf: '45164632481', nome: 'Fulano de Tal' } },
  calendario: { dataInicial: '2026-12-05', periodicidade: 'MENSAL' },
  valor: { valorRec: '99.90' },
  politicaRetentativa: 'NAO_PERMITE',
  loc: 12069,
};
const location = 'pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002';
const rec = {
  idRec: ID_REC,
  vinculo: body.vinculo,
  calendario: body.calendario,
  valor: body.valor,
  politicaRetentativa: 'NAO_PERMITE',
  recebedor: { cnpj: '12345678000195', nome: 'Academia Forte' },
  status: 'CRIADA',
  loc: { id: 12069, location, tipo: 'rec', criacao: '2026-11-24T12:38:28.774Z', idRec: ID_REC },
  atualizacao: [{ status: 'CRIADA', data: '2026-11-24T12:40:02.050Z' }],
  ativacao: { tipoJornada: 'AGUARDANDO_DEFINICAO' },
};
const dadosQR = {
  jornada: 'JORNADA_2',
  pixCopiaECola:
    '00020126180014br.gov.bcb.pix5204000053039865802BR5914ACADEMIA FORTE6009SAO PAULO62070503***80800014br.gov.bcb.pix2558pix.example.com/qr/v2/rec/2353c790eefb11eaadc10242ac120002630459AB',
};
const cancelled = {
  ...rec,
  status: 'CANCELADA',
  atualizacao: [...rec.atualizacao, { status: 'CANCELADA', data: '2026-11-25T09:00:00.000Z' }],
  encerramento: { cancelamento: { solicitante: 'USUARIO_RECEBEDOR', codigo: 'SLCR', descricao: 'Cancelamento solicitado pelo usuário recebedor' } },
};

const JWS =
  'eyJhbGciOiJQUzI1NiIsImtpZCI6InFfM0dnLWQ0WjJsQ3BfQm9rWXNKR0VMZ0lpZU9wTkpCVlRqTVhUZyIsImprdSI6Imh0dHBzOi8vcGl4LmV4YW1wbGUuY29tL3FyL2p3a3MifQ' +
  '.eyJpZFJlYyI6IlJOOTk5OTk5OTkyMDI2MTEyNGFiY2RlZmdoaWprIiwicG9saXRpY2FSZXRlbnRhdGl2YSI6Ik5BT19QRVJNSVRFIn0' +
  '.c2lnbmF0dXJl';

/** The examples of BCB's `rec` operations and of the recurrence's payload location. */
export const REC_EXAMPLES: Record<string, OperationExamples> = {
  bcbGetRecPayload: {
    params: { recUrlAccessToken: '2353c790eefb11eaadc10242ac120002' },
    responses: { 200: JWS },
    problems: { 400: 'RecPayloadOperacaoInvalida', 404: 'RecPayloadNaoEncontrado' },
  },
  bcbPostRec: { body, responses: { 201: rec }, problems: { 400: 'RecOperacaoInvalida' } },
  bcbListRec: {
    params: { inicio: '2026-11-24T00:00:00Z', fim: '2026-11-24T23:59:59Z', status: 'CRIADA' },
    responses: { 200: examplePage({ inicio: '2026-11-24T00:00:00.000Z', fim: '2026-11-24T23:59:59.000Z', status: 'CRIADA' }, 'recs', [rec]) },
    problems: { 400: 'RecConsultaInvalida' },
  },
  bcbGetRec: { params: { idRec: ID_REC }, responses: { 200: { ...rec, dadosQR } }, problems: { 400: 'RecConsultaInvalida', 404: 'RecNaoEncontrada' } },
  bcbPatchRec: { params: { idRec: ID_REC }, body: { status: 'CANCELADA' }, responses: { 200: cancelled }, problems: { 400: 'RecOperacaoInvalida', 404: 'RecNaoEncontrada' } },
};
