/**
 * The amount rules of a due-date charge as BCB's `CobVValor` gives them (multa, juros,
 * abatimento, desconto), checked against the rules BCB's text states for `PUT|PATCH /cobv`
 * (CobVOperacaoInvalida), and read into the terms of amount.ts.
 */
import { badRequest } from '../../http/errors.ts';
import { parseDay } from '../../lib/banking-days.ts';
import { parseDecimal2 } from '../../lib/money.ts';
import type { CobvValor } from './amount.ts';

/** One rule as the wire carries it: a modalidade and a 2-decimal `valorPerc`. */
export interface RuleInput {
  modalidade: number;
  valorPerc: string;
}

export interface DescontoInput {
  modalidade: number;
  descontoDataFixa?: { data: string; valorPerc: string }[] | undefined;
  valorPerc?: string | undefined;
}

/** `valor` without `original`: what charges.valor_rules stores, as given. */
export interface ValorRules {
  multa?: RuleInput | undefined;
  juros?: RuleInput | undefined;
  abatimento?: RuleInput | undefined;
  desconto?: DescontoInput | undefined;
}

/** 100.00%, in hundredths of a percent. */
const ALL_PERCENT = 10_000n;

const invalid = (field: string, reason: string) => badRequest('INVALID_COBV_VALOR', `valor.${field} ${reason}`);

function hundredths(text: string, field: string): bigint {
  const parsed = parseDecimal2(text);
  if (parsed === null) throw invalid(field, 'must be a decimal string with 2 places ("2.00")');
  if (parsed <= 0n) throw invalid(field, 'must be greater than 0');
  return parsed;
}

/** A reduction (abatimento, a discount) must leave something: less than the original and than 100%. */
function reduction(modalidade: number, value: bigint, originalCentavos: bigint, field: string): void {
  const percent = modalidade === 2 || modalidade === 5 || modalidade === 6;
  if (percent ? value >= ALL_PERCENT : value >= originalCentavos) {
    throw invalid(field, percent ? 'must be less than 100%' : 'must be less than valor.original');
  }
}

function descontoOf(d: DescontoInput, originalCentavos: bigint, dueDay: number): NonNullable<CobvValor['desconto']> {
  if (d.modalidade === 1 || d.modalidade === 2) {
    if (d.valorPerc !== undefined) throw invalid('desconto.valorPerc', 'is not allowed with modalidade 1 or 2: use descontoDataFixa');
    const entries = d.descontoDataFixa ?? [];
    if (entries.length === 0) throw invalid('desconto.descontoDataFixa', 'must have 1 to 3 elements with modalidade 1 or 2');
    if (new Set(entries.map((e) => e.data)).size !== entries.length) throw invalid('desconto.descontoDataFixa', 'must not repeat a data');
    const descontoDataFixa = entries.map((e, i) => {
      const at = parseDay(e.data);
      if (at === null) throw invalid(`desconto.descontoDataFixa[${i}].data`, 'must be a real date (YYYY-MM-DD)');
      if (at > dueDay) throw invalid(`desconto.descontoDataFixa[${i}].data`, 'must not be after calendario.dataDeVencimento');
      const value = hundredths(e.valorPerc, `desconto.descontoDataFixa[${i}].valorPerc`);
      reduction(d.modalidade, value, originalCentavos, `desconto.descontoDataFixa[${i}].valorPerc`);
      return { data: e.data, valorPercHundredths: value };
    });
    return { modalidade: d.modalidade, descontoDataFixa };
  }
  if (d.modalidade < 3 || d.modalidade > 6) throw invalid('desconto.modalidade', 'must be 1 to 6');
  if (d.descontoDataFixa !== undefined) throw invalid('desconto.descontoDataFixa', 'is not allowed with modalidade 3 to 6: use valorPerc');
  if (d.valorPerc === undefined) throw invalid('desconto.valorPerc', 'is required with modalidade 3 to 6');
  const value = hundredths(d.valorPerc, 'desconto.valorPerc');
  reduction(d.modalidade, value, originalCentavos, 'desconto.valorPerc');
  return { modalidade: d.modalidade as 3 | 4 | 5 | 6, valorPercHundredths: value };
}

function ruleOf<M extends number>(rule: RuleInput, max: number, field: string): { modalidade: M; valorPercHundredths: bigint } {
  if (!Number.isInteger(rule.modalidade) || rule.modalidade < 1 || rule.modalidade > max) throw invalid(`${field}.modalidade`, `must be 1 to ${max}`);
  return { modalidade: rule.modalidade as M, valorPercHundredths: hundredths(rule.valorPerc, `${field}.valorPerc`) };
}

/**
 * The rules checked and read for amount.ts: every modalidade in its domain, every value above
 * zero, a fine of at most 100%, reductions below the original (and 100%), discount dates real,
 * distinct and not after the due date.
 */
export function cobvValorOf(originalCentavos: bigint, rules: ValorRules, dataDeVencimento: string): CobvValor {
  const dueDay = parseDay(dataDeVencimento);
  if (dueDay === null) throw badRequest('INVALID_DATE', 'calendario.dataDeVencimento must be a real date (YYYY-MM-DD)');
  const valor: CobvValor = { originalCentavos };
  if (rules.multa) {
    valor.multa = ruleOf<1 | 2>(rules.multa, 2, 'multa');
    if (valor.multa.modalidade === 2 && valor.multa.valorPercHundredths > ALL_PERCENT) throw invalid('multa.valorPerc', 'must be at most 100%');
  }
  if (rules.juros) valor.juros = ruleOf<1 | 2 | 3 | 4 | 5 | 6 | 7 | 8>(rules.juros, 8, 'juros');
  if (rules.abatimento) {
    valor.abatimento = ruleOf<1 | 2>(rules.abatimento, 2, 'abatimento');
    reduction(valor.abatimento.modalidade, valor.abatimento.valorPercHundredths, originalCentavos, 'abatimento.valorPerc');
  }
  if (rules.desconto) valor.desconto = descontoOf(rules.desconto, originalCentavos, dueDay);
  return valor;
}

/** The stored rules, without the keys that are absent. */
export function storedRules(rules: ValorRules): ValorRules {
  const out: ValorRules = {};
  if (rules.multa) out.multa = { modalidade: rules.multa.modalidade, valorPerc: rules.multa.valorPerc };
  if (rules.juros) out.juros = { modalidade: rules.juros.modalidade, valorPerc: rules.juros.valorPerc };
  if (rules.abatimento) out.abatimento = { modalidade: rules.abatimento.modalidade, valorPerc: rules.abatimento.valorPerc };
  if (rules.desconto) {
    const d = rules.desconto;
    out.desconto = {
      modalidade: d.modalidade,
      ...(d.descontoDataFixa ? { descontoDataFixa: d.descontoDataFixa.map((e) => ({ data: e.data, valorPerc: e.valorPerc })) } : {}),
      ...(d.valorPerc !== undefined ? { valorPerc: d.valorPerc } : {}),
    };
  }
  return out;
}
