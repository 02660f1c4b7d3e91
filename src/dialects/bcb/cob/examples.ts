import type { OperationExamples } from '../../../http/openapi-examples.ts';
import { examplePage } from '../../../http/example-page.ts';

const TXID = 'pedido20261124000000000001';
const CHAVE = 'c1a9e94e-4af5-4e52-b8e5-4eb266ee637c';
const LOCATION = 'pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25';
const PIX_COPIA_E_COLA =
  '00020101021226790014br.gov.bcb.pix2557pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25' +
  '52040000530398654040.005802BR5923Padaria Pao Quente Ltda6009SAO PAULO62070503***6304ABCD';
const CRIACAO = '2026-11-24T15:30:12.345Z';

const body = {
  calendario: { expiracao: 3600 },
  devedor: { cpf: '12345678909', nome: 'Maria Souza' },
  valor: { original: '37.00' },
  chave: CHAVE,
  solicitacaoPagador: 'Informe o número do pedido.',
  infoAdicionais: [{ nome: 'Pedido', valor: '1234' }],
};

export const cob = {
  calendario: { criacao: CRIACAO, expiracao: 3600 },
  txid: TXID,
  revisao: 0,
  loc: { id: 789, txid: TXID, location: LOCATION, tipoCob: 'cob', criacao: CRIACAO },
  location: LOCATION,
  status: 'ATIVA',
  devedor: body.devedor,
  valor: { original: '37.00', modalidadeAlteracao: 0 },
  chave: CHAVE,
  solicitacaoPagador: body.solicitacaoPagador,
  infoAdicionais: body.infoAdicionais,
  pixCopiaECola: PIX_COPIA_E_COLA,
};

const paid = {
  ...cob,
  status: 'CONCLUIDA',
  pix: [
    {
      endToEndId: 'E60746948202611241522xYz0aBc1dEf',
      txid: TXID,
      valor: '37.00',
      chave: CHAVE,
      horario: '2026-11-24T15:40:00.000Z',
      infoPagador: 'Pedido 1234',
      devolucoes: [
        {
          id: 'devolucao1',
          rtrId: 'D99999999202611241535kL9mN8pQ7rS',
          valor: '7.00',
          natureza: 'ORIGINAL',
          horario: { solicitacao: '2026-11-24T15:45:00.000Z', liquidacao: '2026-11-24T15:45:01.000Z' },
          status: 'DEVOLVIDO',
        },
      ],
    },
  ],
};

/** The examples of BCB's `cob` operations. */
export const COB_EXAMPLES: Record<string, OperationExamples> = {
  bcbPutCob: { params: { txid: TXID }, body, responses: { 201: cob }, problems: { 400: 'CobOperacaoInvalida', 404: 'CobNaoEncontrado' } },
  bcbPostCob: { body, responses: { 201: cob }, problems: { 400: 'CobOperacaoInvalida' } },
  bcbGetCob: { params: { txid: TXID, revisao: 0 }, responses: { 200: paid }, problems: { 400: 'CobConsultaInvalida', 404: 'CobNaoEncontrado' } },
  bcbListCob: {
    params: { inicio: '2026-11-24T00:00:00Z', fim: '2026-11-24T23:59:59Z', 'paginacao.itensPorPagina': 100 },
    responses: { 200: examplePage({ inicio: '2026-11-24T00:00:00.000Z', fim: '2026-11-24T23:59:59.000Z' }, 'cobs', [paid]) },
    problems: { 400: 'CobConsultaInvalida' },
  },
  bcbPatchCob: {
    params: { txid: TXID },
    body: { valor: { original: '40.00' }, solicitacaoPagador: 'Informe o número do pedido e a mesa.' },
    responses: { 200: { ...cob, revisao: 1, valor: { original: '40.00', modalidadeAlteracao: 0 }, solicitacaoPagador: 'Informe o número do pedido e a mesa.' } },
    problems: { 400: 'CobOperacaoInvalida', 404: 'CobNaoEncontrado' },
  },
};
