import { formatCentavos } from '../../lib/money.ts';
import type { PaymentRow } from '../../modules/charges/repo.ts';
import type { Retirada } from '../../modules/charges/service.ts';
import type { RefundRow } from '../../modules/refunds/repo.ts';
import { refundView } from '../../modules/refunds/views.ts';

/** A refund as BCB's `Devolucao` shows it. */
export function devolucaoView(r: RefundRow) {
  return refundView(r);
}

/**
 * BCB's `componentesValor` from the stored components (centavos as decimal strings); a saque or
 * troco carries its agent and provider from the charge's `retirada`, when known.
 */
function componentesValor(components: Record<string, string>, retirada: Retirada | null) {
  const out: Record<string, { valor: string; modalidadeAgente?: string; prestadorDoServicoDeSaque?: string }> = {};
  for (const [name, centavos] of Object.entries(components)) {
    const withdrawal = name === 'saque' || name === 'troco' ? retirada?.[name] : undefined;
    out[name] = {
      valor: formatCentavos(BigInt(centavos)),
      ...(withdrawal ? { modalidadeAgente: withdrawal.modalidadeAgente, prestadorDoServicoDeSaque: withdrawal.prestadorDoServicoDeSaque } : {}),
    };
  }
  return out;
}

/** A received Pix as BCB's `Pix` shows it, with its refunds (`devolucoes`) when it has any. */
export function pixView(payment: PaymentRow, refunds: readonly RefundRow[], retirada: Retirada | null = null) {
  return {
    endToEndId: payment.end_to_end_id!,
    ...(payment.txid !== null ? { txid: payment.txid } : {}),
    valor: formatCentavos(payment.amount_centavos),
    ...(payment.value_components ? { componentesValor: componentesValor(payment.value_components, retirada) } : {}),
    ...(payment.pix_key !== null ? { chave: payment.pix_key } : {}),
    horario: (payment.processed_at ?? payment.created_at).toISOString(),
    ...(payment.description !== null ? { infoPagador: payment.description } : {}),
    ...(refunds.length > 0 ? { devolucoes: refunds.map(devolucaoView) } : {}),
  };
}

export type PixView = ReturnType<typeof pixView>;
