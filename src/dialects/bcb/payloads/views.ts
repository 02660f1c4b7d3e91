import type { ChargeRow } from '../../../modules/charges/repo.ts';
import { effectiveStatus } from '../../../modules/charges/service.ts';
import { cobValor } from '../cob/views.ts';

/**
 * BCB's `CobPayload`: what a payer's PSP reads at the location of an immediate charge, with
 * `calendario.apresentacao` the moment it was fetched and the status the charge has then.
 */
export function cobPayloadView(row: ChargeRow, now: Date) {
  return {
    txid: row.txid,
    revisao: row.revisao,
    calendario: { criacao: row.created_at.toISOString(), apresentacao: now.toISOString(), expiracao: row.expiracao_seconds ?? 0 },
    ...(row.devedor ? { devedor: row.devedor } : {}),
    valor: cobValor(row),
    chave: row.chave,
    ...(row.solicitacao_pagador !== null ? { solicitacaoPagador: row.solicitacao_pagador } : {}),
    ...(row.info_adicionais ? { infoAdicionais: row.info_adicionais } : {}),
    status: effectiveStatus(row, now),
  };
}
