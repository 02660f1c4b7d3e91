import type { OperationExamples } from '../../../http/openapi-examples.ts';
import { examplePage } from '../../../http/example-page.ts';

const E2E = 'E60746948202611241522xYz0aBc1dEf';
const TXID = 'pedido20261124000000000001';
const RTR = 'D99999999202611241535kL9mN8pQ7rS';
const devolucao = {
  id: 'dev20261124001',
  rtrId: RTR,
  valor: '20.00',
  natureza: 'ORIGINAL',
  descricao: 'Um pão a menos',
  horario: { solicitacao: '2026-11-24T15:35:02.117Z' },
  status: 'EM_PROCESSAMENTO',
};
const pix = {
  endToEndId: E2E,
  txid: TXID,
  valor: '150.00',
  componentesValor: { original: { valor: '150.00' } },
  chave: 'c1a9e94e-4af5-4e52-b8e5-4eb266ee637c',
  horario: '2026-11-24T15:22:41.508Z',
  infoPagador: 'Encomenda de pães',
  devolucoes: [devolucao],
};

/** Examples of BCB's `pix` group (received Pix and refunds). */
export const PIX_EXAMPLES: Record<string, OperationExamples> = {
  bcbListPix: {
    params: { inicio: '2026-11-24T00:00:00Z', fim: '2026-11-24T23:59:59Z', 'paginacao.paginaAtual': 0, 'paginacao.itensPorPagina': 100 },
    responses: { 200: examplePage({ inicio: '2026-11-24T00:00:00Z', fim: '2026-11-24T23:59:59Z' }, 'pix', [pix]) },
    problems: { 400: 'PixConsultaInvalida' },
  },
  bcbGetPix: { params: { e2eid: E2E }, responses: { 200: pix }, problems: { 404: 'PixNaoEncontrado' } },
  bcbRequestDevolucao: {
    params: { e2eid: E2E, id: devolucao.id },
    body: { valor: '20.00', descricao: 'Um pão a menos' },
    responses: { 201: devolucao },
    problems: { 400: 'PixDevolucaoInvalida', 404: 'PixNaoEncontrado' },
  },
  bcbGetDevolucao: {
    params: { e2eid: E2E, id: devolucao.id },
    responses: { 200: { ...devolucao, status: 'DEVOLVIDO', horario: { ...devolucao.horario, liquidacao: '2026-11-24T15:35:02.904Z' } } },
    problems: { 404: 'PixDevolucaoNaoEncontrada' },
  },
};
