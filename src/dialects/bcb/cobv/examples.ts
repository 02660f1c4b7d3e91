import type { OperationExamples } from '../../../http/openapi-examples.ts';

const TXID = '7978c0c97ea847e78e8849634473c1f1';
const TXID2 = 'fb2761260e554ad593c7226beb5cb650';
const EVP = '5f84a4c5-c5cb-4599-9f13-7eb4d419dacc';
const LOCATION = 'pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25';
const AT = '2026-11-24T15:30:12.345Z';
const BR_CODE =
  '00020101021226910014br.gov.bcb.pix2569pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca255204000053039865802BR' +
  '5923Empresa de Logistica SA6009SAO PAULO62070503***6304A1B2';
const JWS =
  'eyJhbGciOiJQUzI1NiIsImtpZCI6Ii4uLiIsImprdSI6Imh0dHBzOi8vcGl4LmV4YW1wbGUuY29tL3FyL2p3a3MifQ.' +
  'eyJ0eGlkIjoiNzk3OGMwYzk3ZWE4NDdlNzhlODg0OTYzNDQ3M2MxZjEiLCJ2YWxvciI6eyJmaW5hbCI6IjEyMy40NSJ9fQ.c2lnbmF0dXJh';

const devedor = { logradouro: 'Alameda Souza, Numero 80, Bairro Braz', cidade: 'Recife', uf: 'PE', cep: '70011750', cpf: '12345678909', nome: 'Francisco da Silva' };
const valor = {
  original: '123.45',
  multa: { modalidade: 2, valorPerc: '15.00' },
  juros: { modalidade: 2, valorPerc: '2.00' },
  desconto: { modalidade: 1, descontoDataFixa: [{ data: '2026-12-20', valorPerc: '30.00' }] },
};
export const cobvBody = {
  calendario: { dataDeVencimento: '2026-12-31', validadeAposVencimento: 30 },
  loc: { id: 789 },
  devedor,
  valor,
  chave: EVP,
  solicitacaoPagador: 'Cobrança dos serviços prestados.',
};
const cobv = {
  calendario: { criacao: AT, dataDeVencimento: '2026-12-31', validadeAposVencimento: 30 },
  txid: TXID,
  revisao: 0,
  loc: { id: 789, location: LOCATION, tipoCob: 'cobv', criacao: AT, txid: TXID },
  location: LOCATION,
  status: 'ATIVA',
  devedor,
  recebedor: { cnpj: '56989000019533', nome: 'Empresa de Logistica SA', logradouro: 'Não informado', cidade: 'São Paulo', uf: 'SP', cep: '01001000' },
  valor,
  chave: EVP,
  solicitacaoPagador: 'Cobrança dos serviços prestados.',
  pixCopiaECola: BR_CODE,
};
const paginacao = { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: 1 };
const lote = {
  id: 1234,
  descricao: 'Cobranças dos alunos do turno vespertino',
  criacao: AT,
  cobsv: [
    { txid: TXID2, status: 'CRIADA', criacao: AT },
    {
      txid: TXID,
      status: 'NEGADA',
      problema: {
        type: 'https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida',
        title: 'Cobrança inválida.',
        status: 400,
        detail: 'devedor.cpf must be a valid CPF: 11 digits with valid check digits',
      },
    },
  ],
};

/** The examples of the `cobv` and `lotecobv` operations and of the cobv payload. */
export const COBV_EXAMPLES: Record<string, OperationExamples> = {
  bcbPutCobv: { params: { txid: TXID }, body: cobvBody, responses: { 201: cobv }, problems: { 400: 'CobVOperacaoInvalida', 404: 'CobVNaoEncontrada' } },
  bcbPatchCobv: {
    params: { txid: TXID },
    body: { valor: { original: '150.00' }, solicitacaoPagador: 'Cobrança revisada.' },
    responses: { 200: { ...cobv, revisao: 1, valor: { ...valor, original: '150.00' }, solicitacaoPagador: 'Cobrança revisada.' } },
    problems: { 400: 'CobVOperacaoInvalida', 404: 'CobVNaoEncontrada' },
  },
  bcbGetCobv: { params: { txid: TXID, revisao: 0 }, responses: { 200: cobv }, problems: { 400: 'CobVConsultaInvalida', 404: 'CobVNaoEncontrada' } },
  bcbListCobv: {
    params: { inicio: '2026-11-24T00:00:00Z', fim: '2026-11-24T23:59:59Z', cpf: '12345678909', status: 'ATIVA' },
    responses: { 200: { parametros: { inicio: '2026-11-24T00:00:00.000Z', fim: '2026-11-24T23:59:59.000Z', cpf: '12345678909', status: 'ATIVA', paginacao }, cobs: [cobv] } },
    problems: { 400: 'CobVConsultaInvalida' },
  },
  bcbPutLoteCobv: {
    params: { id: '1234' },
    body: { descricao: 'Cobranças dos alunos do turno vespertino', cobsv: [{ txid: TXID2, ...cobvBody }] },
    problems: { 400: 'LoteCobVOperacaoInvalida', 404: 'LoteCobVNaoEncontrado' },
  },
  bcbPatchLoteCobv: {
    params: { id: '1234' },
    body: { cobsv: [{ txid: TXID2, valor: { original: '110.00' } }] },
    problems: { 400: 'LoteCobVOperacaoInvalida', 404: 'LoteCobVNaoEncontrado' },
  },
  bcbGetLoteCobv: { params: { id: '1234' }, responses: { 200: lote }, problems: { 404: 'LoteCobVNaoEncontrado' } },
  bcbListLoteCobv: {
    params: { inicio: '2026-11-01T00:00:00Z', fim: '2026-11-30T23:59:59Z' },
    responses: { 200: { parametros: { inicio: '2026-11-01T00:00:00.000Z', fim: '2026-11-30T23:59:59.000Z', paginacao }, lotes: [lote] } },
    problems: { 400: 'LoteCobVConsultaInvalida' },
  },
  bcbGetCobvPayload: {
    params: { token: '9d36b84fc70b478fb95c12729b90ca25', DPP: '2026-12-31', codMun: '3550308' },
    responses: { 200: JWS },
    problems: { 400: 'CobPayloadOperacaoInvalida', 404: 'CobPayloadNaoEncontrado' },
  },
};
