import type { Trx } from '../../db/client.ts';
import type { RefundNature } from '../../db/schema.ts';
import { badRequest } from '../../http/errors.ts';
import { formatCentavos } from '../../lib/money.ts';
import { committedByNature } from './repo.ts';

/** The parts of a received PIX's amount (BCB's componentesValor), in centavos. */
export const COMPONENT_NAMES = ['original', 'saque', 'troco', 'juros', 'multa', 'abatimento', 'desconto'] as const;
export type ComponentName = (typeof COMPONENT_NAMES)[number];

export interface ValueComponents {
  readonly amounts: Partial<Record<ComponentName, bigint>>;
  /** For a withdrawal or change: the agent's modality (AGTEC, AGTOT, AGPSS) and the withdrawal service's ISPB. */
  readonly modalidadeAgente: string | null;
  readonly prestadorDoServicoDeSaque: string | null;
}

const CENTAVOS = /^\d{1,15}$/;

/**
 * `transactions.value_components` as stored: each component's centavos as a decimal string
 * (`{"original": "18000", "saque": "2000"}`), and for a withdrawal or change its agent's
 * `modalidadeAgente` and `prestadorDoServicoDeSaque`. Null (a plain PIX): its amount is all
 * `original`.
 */
export function valueComponents(row: { amount_centavos: bigint; value_components: Record<string, string> | null }): ValueComponents {
  const stored = row.value_components;
  if (stored === null) return { amounts: { original: row.amount_centavos }, modalidadeAgente: null, prestadorDoServicoDeSaque: null };
  const amounts: Partial<Record<ComponentName, bigint>> = {};
  for (const name of COMPONENT_NAMES) {
    const value = stored[name];
    if (value !== undefined && CENTAVOS.test(value)) amounts[name] = BigInt(value);
  }
  return { amounts, modalidadeAgente: stored.modalidadeAgente ?? null, prestadorDoServicoDeSaque: stored.prestadorDoServicoDeSaque ?? null };
}

/** The withdrawal or change part of a PIX (Pix Saque, Pix Troco), or null for any other. */
export function withdrawalPart(components: ValueComponents): bigint | null {
  const { saque, troco } = components.amounts;
  return saque ?? troco ?? null;
}

/**
 * BCB's limits by nature (API Pix, DevolucaoSolicitadaNatureza): a PIX without a withdrawal or
 * change is refunded as ORIGINAL only, up to its amount; a Pix Saque or Troco as RETIRADA up to
 * its withdrawal or change, and as ORIGINAL up to the rest (the purchase). What refunds of the
 * same nature already hold (under way or done) counts against the limit.
 */
export async function checkNatureLimit(
  trx: Trx,
  original: { id: bigint; amount_centavos: bigint; value_components: Record<string, string> | null },
  natureza: RefundNature,
  amountCentavos: bigint,
): Promise<void> {
  const part = withdrawalPart(valueComponents(original));
  if (natureza === 'RETIRADA' && part === null) {
    throw badRequest('REFUND_NATURE_NOT_ALLOWED', 'natureza RETIRADA refunds only a PIX with a withdrawal or change (saque or troco)');
  }
  const limit = natureza === 'RETIRADA' ? part! : original.amount_centavos - (part ?? 0n);
  const left = limit - (await committedByNature(trx, original.id, natureza));
  if (amountCentavos > left) {
    throw badRequest(
      'REFUND_EXCEEDS_ORIGINAL',
      `valor exceeds what is still refundable as ${natureza} of this PIX (${formatCentavos(left < 0n ? 0n : left)})`,
    );
  }
}
