import { formatCentavos } from '../../../lib/money.ts';
import type { ChargeRow, ChargeWithPayment } from '../../../modules/charges/repo.ts';
import type { DbExecutor } from '../../../db/client.ts';
import { effectiveStatus, paymentsOf, type ChargePaymentDetail, type Retirada } from '../../../modules/charges/service.ts';
import { locationUrl } from '../../../modules/locations/service.ts';
import { pixView } from '../pix/views.ts';
import { bcbPaginacao } from '../schemas.ts';

export interface CobViewContext {
  readonly now: Date;
  readonly publicUrl: string;
  /** The Pix that concluded the charge, shown on its current revision. */
  readonly payment?: ChargePaymentDetail | undefined;
}

/** BCB's `loc` of a charge's current row, or null once the charge was unlinked from its location. */
export function chargeLoc(current: ChargeWithPayment, publicUrl: string) {
  if (current.loc_id === null || current.loc_token === null || current.loc_created_at === null) return null;
  return {
    id: Number(current.loc_id),
    txid: current.txid,
    location: locationUrl(publicUrl, { tipo_cob: current.tipo_cob, token: current.loc_token }),
    tipoCob: current.tipo_cob,
    criacao: current.loc_created_at.toISOString(),
  };
}

/** BCB's `valor` of an immediate charge: the original amount, its modalidadeAlteracao and any retirada. */
export function cobValor(row: ChargeRow) {
  return {
    original: formatCentavos(row.amount_centavos),
    modalidadeAlteracao: row.modalidade_alteracao,
    ...(row.retirada ? { retirada: row.retirada as Retirada } : {}),
  };
}

/**
 * An immediate charge as BCB shows it (`CobCompleta`): `row` is the revision shown, `current` the
 * charge as it is now, whose location (not part of a revision) and copy-and-paste code are shown.
 * A charge unlinked from its location shows neither `loc`, `location` nor `pixCopiaECola`.
 */
export function cobView(row: ChargeRow, current: ChargeWithPayment, ctx: CobViewContext) {
  const loc = chargeLoc(current, ctx.publicUrl);
  return {
    calendario: { criacao: row.created_at.toISOString(), expiracao: row.expiracao_seconds ?? 0 },
    txid: row.txid,
    revisao: row.revisao,
    ...(loc ? { loc, location: loc.location } : {}),
    status: effectiveStatus(row, ctx.now),
    ...(row.devedor ? { devedor: row.devedor } : {}),
    valor: cobValor(row),
    chave: row.chave,
    ...(row.solicitacao_pagador !== null ? { solicitacaoPagador: row.solicitacao_pagador } : {}),
    ...(row.info_adicionais ? { infoAdicionais: row.info_adicionais } : {}),
    ...(loc && current.pix_copia_e_cola !== null ? { pixCopiaECola: current.pix_copia_e_cola } : {}),
    ...(ctx.payment ? { pix: [pixView(ctx.payment.payment, ctx.payment.refunds)] } : {}),
  };
}

/** A page of a charge list (`cob` or `cobv`) as BCB answers it: each charge with the Pix that paid it, and the paging. */
export async function chargesPage<P extends { paginacao: Parameters<typeof bcbPaginacao>[0] }, R extends ChargeWithPayment, V>(
  deps: { db: DbExecutor; publicUrl: string },
  listed: { parametros: P; rows: R[]; now: Date },
  view: (row: R, current: R, ctx: CobViewContext) => V,
) {
  const payments = await paymentsOf(deps.db, listed.rows);
  const cobs = listed.rows.map((row) => view(row, row, { now: listed.now, publicUrl: deps.publicUrl, payment: payments.get(row.id) }));
  return { parametros: { ...listed.parametros, paginacao: bcbPaginacao(listed.parametros.paginacao) }, cobs };
}
