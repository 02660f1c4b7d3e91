import { assert } from '../../../lib/assert.ts';
import { formatCentavos } from '../../../lib/money.ts';
import type { ChargeRow, ChargeWithPayment } from '../../../modules/charges/repo.ts';
import { effectiveStatus } from '../../../modules/charges/service.ts';
import type { CobvDevedor, Recebedor } from '../../../modules/cobv/repo.ts';
import type { ValorRules } from '../../../modules/cobv/rules.ts';
import { chargeLoc, type CobViewContext } from '../cob/views.ts';
import { pixView } from '../pix/views.ts';

/**
 * BCB's CobVCompleta of a stored cobv, with the status it has at `ctx.now`: `row` is the revision
 * shown, `current` the charge as it is now, whose location and copy-and-paste code are shown, as a
 * cob's are. A cobv unlinked from its location (DELETE /loc/{id}/txid) shows neither `loc` nor
 * `pixCopiaECola`, and `location` empty: CobVGerada, unlike CobGerada, requires the field. The Pix
 * that concluded it (`ctx.payment`) is BCB's Pix, with its componentesValor (the fine, interest,
 * abatement and discount it paid) and its refunds.
 */
export function cobvView(row: ChargeRow, current: ChargeWithPayment, ctx: CobViewContext) {
  assert(row.due_date !== null && row.validade_apos_vencimento !== null, `charge ${row.id} shown as a cobv has a due date`);
  const loc = chargeLoc(current, ctx.publicUrl);
  return {
    calendario: { criacao: row.created_at.toISOString(), dataDeVencimento: row.due_date, validadeAposVencimento: row.validade_apos_vencimento },
    txid: row.txid,
    revisao: row.revisao,
    ...(loc ? { loc } : {}),
    location: loc?.location ?? '',
    status: effectiveStatus(row, ctx.now),
    devedor: row.devedor as CobvDevedor,
    recebedor: row.recebedor as unknown as Recebedor,
    valor: { original: formatCentavos(row.amount_centavos), ...((row.valor_rules ?? {}) as ValorRules) },
    chave: row.chave,
    ...(row.solicitacao_pagador !== null ? { solicitacaoPagador: row.solicitacao_pagador } : {}),
    ...(row.info_adicionais ? { infoAdicionais: row.info_adicionais } : {}),
    ...(loc ? { pixCopiaECola: current.pix_copia_e_cola ?? current.br_code } : {}),
    ...(ctx.payment ? { pix: [pixView(ctx.payment.payment, ctx.payment.refunds)] } : {}),
  };
}

export type CobvView = ReturnType<typeof cobvView>;
