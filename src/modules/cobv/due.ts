/**
 * What a stored cobv asks on a day: its rules (charges.valor_rules) read by rules.ts and applied
 * by amount.ts. The payment (charges/service.ts) and the payload (`/qr/v2/cobv/...`) both ask here.
 */
import { assert } from '../../lib/assert.ts';
import { SAO_PAULO_OFFSET } from '../../lib/dates.ts';
import type { ChargeRow } from '../charges/repo.ts';
import { cobvAmount, type CobvAmount } from './amount.ts';
import { cobvValorOf, type ValorRules } from './rules.ts';

const OFFSET_MS = (Number(SAO_PAULO_OFFSET.slice(0, 3)) * 60 + Number(SAO_PAULO_OFFSET[0] + SAO_PAULO_OFFSET.slice(4))) * 60_000;

/** The day (`YYYY-MM-DD`) an instant falls on in São Paulo (UTC-03:00 all year since 2019). */
export function saoPauloDay(at: Date): string {
  return new Date(at.getTime() + OFFSET_MS).toISOString().slice(0, 10);
}

type StoredCobv = Pick<ChargeRow, 'id' | 'amount_centavos' | 'valor_rules' | 'due_date' | 'validade_apos_vencimento'>;

/** The amounts of a stored cobv for a payment on `day` (`YYYY-MM-DD`). */
export function cobvDueOn(row: StoredCobv, day: string): CobvAmount {
  assert(row.due_date !== null && row.validade_apos_vencimento !== null, `charge ${row.id} read as a cobv has a due date`);
  return cobvAmount({
    valor: cobvValorOf(row.amount_centavos, (row.valor_rules ?? {}) as ValorRules, row.due_date),
    dataDeVencimento: row.due_date,
    validadeAposVencimento: row.validade_apos_vencimento,
    dataDePagamento: day,
  });
}

/**
 * BCB's componentesValor of a cobv payment as transactions.value_components keeps them (centavos
 * in decimal strings: "12345" is R$ 123.45): original and the others that are not zero.
 */
export function cobvValueComponents(due: CobvAmount): Record<string, string> {
  const out: Record<string, string> = { original: due.originalCentavos.toString() };
  const parts = { multa: due.multaCentavos, juros: due.jurosCentavos, abatimento: due.abatimentoCentavos, desconto: due.descontoCentavos };
  for (const [name, centavos] of Object.entries(parts)) if (centavos !== 0n) out[name] = centavos.toString();
  return out;
}
