import { formatCentavos } from '../../lib/money.ts';
import type { ChargeRow, ChargeWithPayment } from './repo.ts';
import { effectiveStatus } from './service.ts';

/**
 * The charge as BCB's API Pix shows it (`cob`), with the status it has at `now`. Optional
 * fields appear only when set; `pix` only once a payment concluded it.
 */
export function chargeView(row: ChargeRow | ChargeWithPayment, now: Date) {
  const payment = 'pix_end_to_end_id' in row && row.pix_end_to_end_id !== null ? row : null;
  return {
    calendario: { criacao: row.created_at.toISOString(), expiracao: row.expiracao_seconds },
    txid: row.txid,
    revisao: row.revisao,
    loc: { id: Number(row.id), location: row.br_code, tipoCob: 'cob' as const },
    location: row.br_code,
    status: effectiveStatus(row, now),
    ...(row.devedor ? { devedor: row.devedor } : {}),
    valor: { original: formatCentavos(row.amount_centavos), modalidadeAlteracao: row.modalidade_alteracao },
    chave: row.chave,
    ...(row.solicitacao_pagador !== null ? { solicitacaoPagador: row.solicitacao_pagador } : {}),
    ...(row.info_adicionais ? { infoAdicionais: row.info_adicionais } : {}),
    pixCopiaECola: row.br_code,
    ...(payment
      ? {
          pix: [
            {
              endToEndId: payment.pix_end_to_end_id!,
              txid: row.txid,
              valor: formatCentavos(payment.pix_amount_centavos!),
              horario: payment.pix_at!.toISOString(),
            },
          ],
        }
      : {}),
  };
}

export type ChargeView = ReturnType<typeof chargeView>;
