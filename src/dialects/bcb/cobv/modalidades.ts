import type { FastifyRequest } from 'fastify';

const RULES = ['multa', 'juros', 'abatimento', 'desconto'] as const;

function inValor(valor: unknown): void {
  if (!valor || typeof valor !== 'object') return;
  for (const name of RULES) {
    const rule = (valor as Record<string, unknown>)[name];
    if (!rule || typeof rule !== 'object') continue;
    const modalidade = (rule as Record<string, unknown>).modalidade;
    if (typeof modalidade === 'string' && /^[1-9]$/.test(modalidade)) (rule as Record<string, unknown>).modalidade = Number(modalidade);
  }
}

/**
 * BCB's own example of `PUT /cobv` sends each `modalidade` as a string (`"2"`) where its schema
 * says integer, and integrations written from it do the same. Before validation, a modalidade
 * that is one digit in a string becomes that integer (in a cobv's `valor`, or in each of a
 * batch's `cobsv`); anything else is left for the schema to refuse. Answers carry integers.
 */
export async function modalidadesAsIntegers(request: FastifyRequest): Promise<void> {
  const body = request.body as { valor?: unknown; cobsv?: unknown } | null | undefined;
  if (!body || typeof body !== 'object') return;
  inValor(body.valor);
  if (Array.isArray(body.cobsv)) for (const cobv of body.cobsv) if (cobv && typeof cobv === 'object') inValor((cobv as { valor?: unknown }).valor);
}
