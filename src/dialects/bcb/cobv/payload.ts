import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError } from 'fastify';
import { Type } from 'typebox';
import { registerValidation } from '../../../http/validation.ts';
import { formatCentavos } from '../../../lib/money.ts';
import * as charges from '../../../modules/charges/repo.ts';
import type { ChargeRow } from '../../../modules/charges/repo.ts';
import { effectiveStatus } from '../../../modules/charges/service.ts';
import type { CobvAmount } from '../../../modules/cobv/amount.ts';
import { cobvDueOn, saoPauloDay } from '../../../modules/cobv/due.ts';
import type { CobvDevedor } from '../../../modules/cobv/repo.ts';
import { findLocationByToken } from '../../../modules/locations/repo.ts';
import { PAYLOAD_PATH } from '../../../modules/locations/service.ts';
import type { BcbDeps } from '../operations.ts';
import { problem, problemResponses, sendProblem } from '../problems.ts';
import { toProblem } from '../scope.ts';

/** BCB's CobVPayloadValor: the amounts of the payment date, those that are not zero, and final. */
function valorOf(due: CobvAmount) {
  const parts = { multa: due.multaCentavos, juros: due.jurosCentavos, abatimento: due.abatimentoCentavos, desconto: due.descontoCentavos };
  const shown: Record<string, string> = { original: formatCentavos(due.originalCentavos) };
  for (const [name, centavos] of Object.entries(parts)) if (centavos !== 0n) shown[name] = formatCentavos(centavos);
  return { ...shown, final: formatCentavos(due.finalCentavos) };
}

/** BCB's CobVPayload of a cobv, presented at `now` for a payment on `day`. */
export function cobvPayload(row: ChargeRow, day: string, now: Date) {
  const devedor = row.devedor as CobvDevedor;
  return {
    calendario: {
      criacao: row.created_at.toISOString(),
      apresentacao: now.toISOString(),
      dataDeVencimento: row.due_date!,
      validadeAposVencimento: row.validade_apos_vencimento!,
    },
    devedor: devedor.cnpj !== undefined ? { cnpj: devedor.cnpj, nome: devedor.nome } : { cpf: devedor.cpf!, nome: devedor.nome },
    recebedor: row.recebedor!,
    txid: row.txid,
    revisao: row.revisao,
    status: effectiveStatus(row, now),
    valor: valorOf(cobvDueOn(row, day)),
    chave: row.chave,
    ...(row.solicitacao_pagador !== null ? { solicitacaoPagador: row.solicitacao_pagador } : {}),
    ...(row.info_adicionais ? { infoAdicionais: row.info_adicionais } : {}),
  };
}

const notFound = () => problem('CobPayloadNaoEncontrado', 'A cobrança em questão não foi encontrada para a location requisitada.');

/**
 * The charge a cobv location serves and the day its amounts are for (DPP, default today in São
 * Paulo). A location that serves no cobv, or one removed or expired, is CobPayloadNaoEncontrado
 * (404); a paid one is served with its status. DPP before today or after the last payable day
 * is CobPayloadOperacaoInvalida. Municipal holidays (codMun) are not modelled.
 */
async function servedCobv(deps: BcbDeps, token: string, dpp: string | undefined, now: Date) {
  const location = await findLocationByToken(deps.db, token);
  if (location?.tipo_cob !== 'cobv' || location.txid === null) throw notFound();
  const row = await charges.findCharge(deps.db, location.account_id, location.txid, 'cobv');
  if (!row) throw notFound();
  const status = effectiveStatus(row, now);
  if (status === 'REMOVIDA_PELO_PSP' || status === 'REMOVIDA_PELO_USUARIO_RECEBEDOR') throw notFound();
  const today = saoPauloDay(now);
  const day = dpp ?? today;
  if (status === 'ATIVA') {
    if (day < today) throw problem('CobPayloadOperacaoInvalida', `DPP (${day}) é anterior à data presente (${today}).`);
    const due = cobvDueOn(row, day);
    if (!due.payable) throw problem('CobPayloadOperacaoInvalida', `DPP (${day}) é posterior ao último dia em que a cobrança pode ser paga (${due.ultimoDiaPagavel}).`);
  }
  return { row, day };
}

/** The public payload of cobv locations: GET /qr/v2/cobv/{pixUrlAccessToken}?DPP=YYYY-MM-DD&codMun=NNNNNNN. */
export const cobvPayloadRoute =
  (deps: BcbDeps): FastifyPluginAsyncTypebox =>
  async (app) => {
    registerValidation(app, { allErrors: true });
    app.setErrorHandler((error: FastifyError, request, reply) => sendProblem(request, reply, toProblem(error, request)));
    app.get(`${PAYLOAD_PATH}/cobv/:token`, {
      schema: {
        tags: ['CobPayload'],
        security: [],
        operationId: 'bcbGetCobvPayload',
        summary: 'Recuperar o payload JSON que representa a cobrança com vencimento',
        description: 'Um JWS compacto (application/jose) sobre o CobVPayload, com os valores devidos em DPP (padrão: hoje em São Paulo). codMun é aceito; feriados municipais não são considerados.',
        params: Type.Object({ token: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: Type.Object({
          DPP: Type.Optional(Type.String({ format: 'date', description: 'Data de pagamento pretendida' })),
          codMun: Type.Optional(Type.String({ pattern: '^\\d{7}$', description: 'Código IBGE do município do pagador' })),
        }),
        response: {
          200: { description: 'JWS compacto do CobVPayload', content: { 'application/jose': { schema: Type.String() } } },
          ...problemResponses(400, 404, 503),
        },
      },
      config: { bcbProblems: { invalid: 'CobPayloadOperacaoInvalida', notFound: 'CobPayloadNaoEncontrado' } },
    }, async (request, reply) => {
      const now = deps.clock.now();
      const { row, day } = await servedCobv(deps, request.params.token, request.query.DPP, now);
      const jws = await (await deps.payloadSigner()).signPayload(cobvPayload(row, day, now));
      return reply.header('cache-control', 'no-store').type('application/jose').serializer((body: unknown) => body as string).send(jws);
    });
  };
