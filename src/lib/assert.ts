/** An invariant that must hold; a failure aborts the current request, never the process. */
export class AssertionFailed extends Error {
  override name = 'AssertionFailed';
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionFailed(message);
}
