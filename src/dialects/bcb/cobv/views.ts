import { assert } from '../../../lib/assert.ts';
import { formatCentavos } from '../../../lib/money.ts';
import type { ChargeRow, ChargeWithPayment } from '../../../modules/charges/repo.ts';
import { effectiveStatus } from '../../../modules/charges/service.ts';
import { locationUrl } from '../../../modules/locations/service.ts';
import type { CobvDevedor, Recebedor } from '../../../modules/cobv/repo.ts';
import type { ValorRules } from '../../../modules/cobv/rules.ts';

/** A charge row with its location, as the lists and GET read it (an earlier revision included). */
type CobvRow = ChargeRow & Pick<ChargeWithPayment, 'loc_token' | 'loc_created_at'> & Partial<ChargeWithPayment>;

function locOf(publicUrl: string, row: CobvRow) {
  // A cobv unlinked from its location (DELETE /v2/loc/{id}/txid) keeps showing its id, as a cob does.
  const token = row.loc_token ?? '';
  const location = locationUrl(publicUrl, { tipo_cob: 'cobv', token });
  return { id: Number(row.loc_id ?? row.id), location, tipoCob: 'cobv' as const, criacao: (row.loc_created_at ?? row.created_at).toISOString(), txid: row.txid };
}

/** BCB's CobVCompleta of a stored cobv, with the status it has at `now`. */
export function cobvView(row: CobvRow, publicUrl: string, now: Date) {
  assert(row.due_date !== null && row.validade_apos_vencimento !== null, `charge ${row.id} shown as a cobv has a due date`);
  const loc = locOf(publicUrl, row);
  const paid = row.pix_end_to_end_id ? row : null;
  return {
    calendario: { criacao: row.created_at.toISOString(), dataDeVencimento: row.due_date, validadeAposVencimento: row.validade_apos_vencimento },
    txid: row.txid,
    revisao: row.revisao,
    loc,
    location: loc.location,
    status: effectiveStatus(row, now),
    devedor: row.devedor as CobvDevedor,
    recebedor: row.recebedor as unknown as Recebedor,
    valor: { original: formatCentavos(row.amount_centavos), ...((row.valor_rules ?? {}) as ValorRules) },
    chave: row.chave,
    ...(row.solicitacao_pagador !== null ? { solicitacaoPagador: row.solicitacao_pagador } : {}),
    ...(row.info_adicionais ? { infoAdicionais: row.info_adicionais } : {}),
    pixCopiaECola: row.pix_copia_e_cola ?? row.br_code,
    ...(paid
      ? { pix: [{ endToEndId: paid.pix_end_to_end_id!, txid: row.txid, valor: formatCentavos(paid.pix_amount_centavos!), horario: paid.pix_at!.toISOString() }] }
      : {}),
  };
}

export type CobvView = ReturnType<typeof cobvView>;
