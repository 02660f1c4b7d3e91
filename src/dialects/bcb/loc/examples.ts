import type { OperationExamples } from '../../../http/openapi-examples.ts';
import { examplePage } from '../../../http/example-page.ts';

const CRIACAO = '2026-11-24T15:30:12.345Z';
const loc = { id: 789, location: 'pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25', tipoCob: 'cob', criacao: CRIACAO };
const linked = { ...loc, txid: 'pedido20261124000000000001' };
const problems = { 400: 'PayloadLocationOperacaoInvalida', 404: 'PayloadLocationNaoEncontrado' } as const;

/** The examples of BCB's `loc` operations. */
export const LOC_EXAMPLES: Record<string, OperationExamples> = {
  bcbPostLoc: { body: { tipoCob: 'cob' }, responses: { 201: loc }, problems },
  bcbListLoc: {
    params: { inicio: '2026-11-24T00:00:00Z', fim: '2026-11-24T23:59:59Z', tipoCob: 'cob' },
    responses: { 200: examplePage({ inicio: '2026-11-24T00:00:00.000Z', fim: '2026-11-24T23:59:59.000Z', tipoCob: 'cob' }, 'loc', [linked]) },
    problems: { 400: 'PayloadLocationConsultaInvalida' },
  },
  bcbGetLoc: { params: { id: '789' }, responses: { 200: linked }, problems },
  bcbDeleteLocTxid: { params: { id: '789' }, responses: { 200: loc }, problems },
  bcbGetLocQrcode: {
    params: { id: '789' },
    responses: {
      200: {
        qrcode:
          '00020101021226790014br.gov.bcb.pix2557pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25' +
          '52040000530398654040.005802BR5923Padaria Pao Quente Ltda6009SAO PAULO62070503***6304ABCD',
        imagemQrcode: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAASwAAAEsCAYAAAB5fY51AAAAAklEQVR4AewaftIAAA...',
      },
    },
    problems,
  },
};
