import { formatCentavos } from '../../../lib/money.ts';
import { valueComponents, type ComponentName } from '../../../modules/refunds/natures.ts';
import type { RefundRow } from '../../../modules/refunds/repo.ts';
import { refundView } from '../../../modules/refunds/views.ts';

/** The fields of a received PIX (a PAYMENT transaction) BCB's `Pix` is built from. */
export interface PixSource {
  amount_centavos: bigint;
  end_to_end_id: string | null;
  txid: string | null;
  pix_key: string | null;
  description: string | null;
  value_components: Record<string, string> | null;
  created_at: Date;
}

/** BCB's `Devolucao`: the core's refund view, which already has its shape. */
export const devolucaoView = (refund: RefundRow) => refundView(refund);

interface Part {
  valor: string;
  modalidadeAgente?: string;
  prestadorDoServicoDeSaque?: string;
}

/** BCB's `componentesValor`: each part with its `valor`; a withdrawal or change also with its agent. */
export function componentesValorView(row: Pick<PixSource, 'amount_centavos' | 'value_components'>) {
  const components = valueComponents(row);
  const out: Partial<Record<ComponentName, Part>> = {};
  for (const [name, centavos] of Object.entries(components.amounts) as [ComponentName, bigint][]) {
    const withdrawal = name === 'saque' || name === 'troco';
    out[name] = {
      valor: formatCentavos(centavos),
      ...(withdrawal ? { modalidadeAgente: components.modalidadeAgente ?? (name === 'saque' ? 'AGPSS' : 'AGTEC') } : {}),
      ...(withdrawal && components.prestadorDoServicoDeSaque !== null ? { prestadorDoServicoDeSaque: components.prestadorDoServicoDeSaque } : {}),
    };
  }
  return out;
}

/** BCB's `Pix`: a PIX the account received, with its refunds (oldest first) when it has any. */
export function pixView(row: PixSource, refunds: readonly RefundRow[] = []) {
  return {
    endToEndId: row.end_to_end_id ?? '',
    ...(row.txid !== null ? { txid: row.txid } : {}),
    valor: formatCentavos(row.amount_centavos),
    componentesValor: componentesValorView(row),
    ...(row.pix_key !== null ? { chave: row.pix_key } : {}),
    horario: row.created_at.toISOString(),
    ...(row.description !== null ? { infoPagador: row.description } : {}),
    ...(refunds.length > 0 ? { devolucoes: refunds.map(devolucaoView) } : {}),
  };
}

export type PixView = ReturnType<typeof pixView>;
