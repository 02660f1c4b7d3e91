import { assert } from '../../lib/assert.ts';
import { formatCentavos } from '../../lib/money.ts';
import type { ChargeRow, ChargeWithPayment } from './repo.ts';
import { effectiveStatus } from './service.ts';

/**
 * The charge as the root dialect shows it (`cob`, with the static BR Code as its location), with
 * the status it has at `now`. Optional fields appear only when set; `pix` only once a payment
 * concluded it. Only immediate charges are shown here: a cobv is BCB's dialect's alone.
 */
export function chargeView(row: ChargeRow | ChargeWithPayment, now: Date) {
  const payment = 'pix_end_to_end_id' in row && row.pix_end_to_end_id !== null ? row : null;
  assert(row.expiracao_seconds !== null, `charge ${row.id} shown as a cob is an immediate charge`);
  return {
    calendario: { criacao: row.created_at.toISOString(), expiracao: row.expiracao_seconds },
    txid: row.txid,
    revisao: row.revisao,
    // The location's id, as /v2 shows it; a charge unlinked from its location keeps its own id.
    loc: { id: Number(row.loc_id ?? row.id), location: row.br_code, tipoCob: 'cob' as const },
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
