import { formatCentavos } from '../../lib/money.ts';
import type { RefundRow } from './repo.ts';

/** A refund as BCB's API Pix shows it (`devolucao`). */
export function refundView(r: RefundRow) {
  return {
    id: r.refund_id,
    rtrId: r.rtr_id,
    valor: formatCentavos(r.amount_centavos),
    natureza: r.natureza,
    ...(r.descricao !== null ? { descricao: r.descricao } : {}),
    horario: {
      solicitacao: r.requested_at.toISOString(),
      ...(r.status === 'DEVOLVIDO' ? { liquidacao: r.updated_at.toISOString() } : {}),
    },
    status: r.status,
    ...(r.motivo !== null ? { motivo: r.motivo } : {}),
  };
}
