import { formatCentavos } from '../../../lib/money.ts';
import { saoPauloDay } from '../../../modules/cobv/due.ts';
import type { AttemptRow, PaidPix, RecurringChargeDetail } from '../../../modules/recurrences/rows.ts';

/** BCB's CobRTentativas item: an attempt, with its history and, when refused, why. */
function tentativaView(a: AttemptRow) {
  return {
    dataLiquidacao: a.data_liquidacao,
    tipo: a.tipo,
    status: a.status,
    endToEndId: a.end_to_end_id,
    atualizacao: a.history,
    ...(a.rejeicao === null ? {} : { rejeicao: a.rejeicao }),
  };
}

/** BCB's PixAutomatico: the Pix that paid the charge. */
function pixView(p: PaidPix) {
  return {
    endToEndId: p.end_to_end_id ?? '',
    ...(p.txid === null ? {} : { txid: p.txid }),
    valor: formatCentavos(p.amount_centavos),
    horario: p.created_at.toISOString(),
    ...(p.description === null ? {} : { infoPagador: p.description }),
  };
}

/** BCB's CobRGerada: the recurring charge as its receiver made it, with its history. */
export function cobrView({ row }: Pick<RecurringChargeDetail, 'row'>) {
  return {
    idRec: row.id_rec,
    txid: row.txid,
    ...(row.info_adicional === null ? {} : { infoAdicional: row.info_adicional }),
    // BCB's dates are Brasília's: a charge made at 22:00 there is of that day, not of UTC's next one.
    calendario: { criacao: saoPauloDay(row.created_at), dataDeVencimento: row.due_date },
    valor: { original: formatCentavos(row.amount_centavos) },
    status: row.status,
    politicaRetentativa: row.politica_retentativa,
    ajusteDiaUtil: row.ajuste_dia_util,
    ...(row.devedor === null ? {} : { devedor: row.devedor }),
    recebedor: { cnpj: row.recebedor_cnpj, nome: row.recebedor_nome, ...row.recebedor },
    atualizacao: row.history,
    ...(row.encerramento === null ? {} : { encerramento: row.encerramento }),
  };
}

/** BCB's CobRCompleta: with its attempts and the Pix that paid it. */
export function cobrCompletaView(detail: RecurringChargeDetail) {
  return {
    ...cobrView(detail),
    ...(detail.attempts.length === 0 ? {} : { tentativas: detail.attempts.map(tentativaView) }),
    ...(detail.paid === null ? {} : { pix: [pixView(detail.paid)] }),
  };
}

/** BCB's CobRNotification: what `POST {webhookcobr}/cobr` tells of a recurring charge that changed. */
export function cobrNotificationView(detail: RecurringChargeDetail) {
  const { row } = detail;
  return {
    idRec: row.id_rec,
    txid: row.txid,
    status: row.status,
    atualizacao: row.history,
    ...(row.encerramento === null ? {} : { encerramento: row.encerramento }),
    ...(detail.attempts.length === 0 ? {} : { tentativas: detail.attempts.map(tentativaView) }),
    ...(detail.paid === null ? {} : { pix: [pixView(detail.paid)] }),
  };
}
