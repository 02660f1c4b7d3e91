/**
 * At most `concurrency` tasks run at once and at most `maxWaiting` wait for their turn, in
 * arrival order; a task that finds no room is refused at once (`GateFull`) instead of joining a
 * queue that grows until its callers time out. For work whose cost the caller cannot bound any
 * other way, such as a slow hash of a secret that anyone may send.
 * Why, and what was measured: docs/decisions/0019-limits-on-token-requests.md.
 */
export class Gate {
  readonly #concurrency: number;
  readonly #maxWaiting: number;
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  constructor(options: { concurrency: number; maxWaiting: number }) {
    if (!(options.concurrency >= 1) || !(options.maxWaiting >= 0)) throw new RangeError('a gate needs concurrency >= 1 and maxWaiting >= 0');
    this.#concurrency = options.concurrency;
    this.#maxWaiting = options.maxWaiting;
  }

  get running(): number {
    return this.#running;
  }

  get waiting(): number {
    return this.#waiting.length;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#concurrency) {
      if (this.#waiting.length >= this.#maxWaiting) throw new GateFull();
      // The finishing task hands its slot over: #running stays counted for this one.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

export class GateFull extends Error {
  override name = 'GateFull';
  constructor() {
    super('no room: too many tasks running and waiting');
  }
}
