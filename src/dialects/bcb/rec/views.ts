import { formatCentavos } from '../../../lib/money.ts';
import { recLocationUrl } from '../../../modules/recurrences/locations.ts';
import type { RecurrenceCode, RecurrenceRow } from '../../../modules/recurrences/service.ts';

/** BCB's RecGerada: the recurrence as its receiver made it, without the payer's side. */
export function recView(row: RecurrenceRow, publicUrl: string) {
  const valor = {
    ...(row.valor_rec_centavos === null ? {} : { valorRec: formatCentavos(row.valor_rec_centavos) }),
    ...(row.valor_minimo_centavos === null ? {} : { valorMinimoRecebedor: formatCentavos(row.valor_minimo_centavos) }),
  };
  return {
    idRec: row.id_rec,
    vinculo: {
      ...(row.objeto === null ? {} : { objeto: row.objeto }),
      contrato: row.contrato,
      devedor: { [row.devedor_document_type === 'CPF' ? 'cpf' : 'cnpj']: row.devedor_document, nome: row.devedor_nome },
    },
    calendario: { dataInicial: row.data_inicial, ...(row.data_final === null ? {} : { dataFinal: row.data_final }), periodicidade: row.periodicidade },
    ...(Object.keys(valor).length === 0 ? {} : { valor }),
    politicaRetentativa: row.politica_retentativa,
    recebedor: { cnpj: row.recebedor_cnpj, nome: row.recebedor_nome, ...(row.convenio === null ? {} : { convenio: row.convenio }) },
    status: row.status,
    ...(row.loc_id === null || row.loc_token === null || row.loc_created_at === null
      ? {}
      : {
          loc: { id: Number(row.loc_id), location: recLocationUrl(publicUrl, row.loc_token), tipo: 'rec' as const, criacao: row.loc_created_at.toISOString(), idRec: row.id_rec },
        }),
    atualizacao: row.history,
    ...(row.encerramento === null ? {} : { encerramento: row.encerramento }),
    ativacao: { tipoJornada: row.jornada, ...(row.jornada_txid === null ? {} : { dadosJornada: { txid: row.jornada_txid } }) },
  };
}

/** BCB's RecCompleta: with the payer's side once approved, and the code asked for (dadosQR). */
export function recCompletaView(row: RecurrenceRow, publicUrl: string, code?: RecurrenceCode) {
  return { ...recView(row, publicUrl), ...(row.pagador === null ? {} : { pagador: row.pagador }), ...(code === undefined ? {} : { dadosQR: code }) };
}

/** BCB's RecNotification: what `POST {webhookrec}/rec` tells of a recurrence that changed. */
export function recNotificationView(row: RecurrenceRow) {
  return {
    idRec: row.id_rec,
    status: row.status,
    atualizacao: row.history,
    ...(row.encerramento === null ? {} : { encerramento: row.encerramento }),
    ativacao: { tipoJornada: row.jornada, ...(row.jornada_txid === null ? {} : { dadosJornada: { txid: row.jornada_txid } }) },
  };
}
