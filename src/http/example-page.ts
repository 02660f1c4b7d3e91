/**
 * The answer of a list in the OpenAPI examples (both dialects): `parametros` as the request asked
 * them, one page of 100 items that holds them all, and the items under the list's key.
 */
export function examplePage(parametros: Record<string, unknown>, key: string, items: readonly unknown[]) {
  const paginacao = { paginaAtual: 0, itensPorPagina: 100, quantidadeDePaginas: 1, quantidadeTotalDeItens: items.length };
  return { parametros: { ...parametros, paginacao }, [key]: items };
}
