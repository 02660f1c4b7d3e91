/**
 * Per key (an account), at most `concurrency` tasks run at once; a task beyond them waits its
 * turn in arrival order, at most `maxWaiting` of them and at most `waitMs` each, and is refused
 * (`KeyGateFull`) when there is no room or its wait runs out. What one key does never delays
 * another: each key has its own slots. A key with nothing running or waiting is forgotten, so
 * the gate holds no more entries than there are tasks in flight.
 */
export class KeyGate {
  readonly #concurrency: number;
  readonly #maxWaiting: number;
  readonly #waitMs: number;
  readonly #keys = new Map<string, { running: number; waiting: Waiter[] }>();

  constructor(options: { concurrency: number; maxWaiting: number; waitMs: number }) {
    if (!(options.concurrency >= 1) || !(options.maxWaiting >= 0) || !(options.waitMs >= 0)) {
      throw new RangeError('a key gate needs concurrency >= 1, maxWaiting >= 0 and waitMs >= 0');
    }
    this.#concurrency = options.concurrency;
    this.#maxWaiting = options.maxWaiting;
    this.#waitMs = options.waitMs;
  }

  /** Tasks of `key` running now (tests and metrics). */
  running(key: string): number {
    return this.#keys.get(key)?.running ?? 0;
  }

  /** Tasks of `key` waiting for a slot now. */
  waiting(key: string): number {
    return this.#keys.get(key)?.waiting.length ?? 0;
  }

  /** Keys with a task running or waiting. */
  get size(): number {
    return this.#keys.size;
  }

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    await this.#acquire(key);
    try {
      return await task();
    } finally {
      this.#release(key);
    }
  }

  #acquire(key: string): Promise<void> | void {
    let entry = this.#keys.get(key);
    if (!entry) {
      entry = { running: 0, waiting: [] };
      this.#keys.set(key, entry);
    }
    if (entry.running < this.#concurrency) {
      entry.running++;
      return;
    }
    if (entry.waiting.length >= this.#maxWaiting || this.#waitMs === 0) throw new KeyGateFull('queue');
    const waiting = entry.waiting;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          waiting.splice(waiting.indexOf(waiter), 1);
          reject(new KeyGateFull('wait'));
        }, this.#waitMs),
      };
      waiting.push(waiter);
    });
  }

  /** The finishing task hands its slot to the first waiter, if any: `running` stays counted for it. */
  #release(key: string): void {
    const entry = this.#keys.get(key)!;
    const next = entry.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve();
      return;
    }
    entry.running--;
    if (entry.running === 0) this.#keys.delete(key);
  }
}

interface Waiter {
  resolve: () => void;
  timer: ReturnType<typeof setTimeout>;
}

export class KeyGateFull extends Error {
  override name = 'KeyGateFull';
  /** `queue`: too many were already waiting; `wait`: this one waited its whole allowance. */
  readonly reason: 'queue' | 'wait';
  constructor(reason: 'queue' | 'wait') {
    super(reason === 'queue' ? 'no room: too many tasks of this key running and waiting' : 'no slot of this key came free in time');
    this.reason = reason;
  }
}
