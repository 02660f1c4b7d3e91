/** Time comes from an injected clock, so tests move time instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that stands still until moved; for tests and simulations. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | string = '2026-11-22T12:00:00.000Z') {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(at: Date | string): void {
    this.#ms = new Date(at).getTime();
  }
}

/**
 * Business time: a base clock (the real one) plus an offset that only grows within an epoch. The
 * sandbox's test clock moves it (modules/controls), and a reset starts a new epoch at offset 0;
 * production never does either, so there it is the real time.
 */
export class OffsetClock implements Clock {
  readonly #base: Clock;
  #offsetMs = 0;
  #epoch = 0;
  constructor(base: Clock) {
    this.#base = base;
  }
  now(): Date {
    return new Date(this.#base.now().getTime() + this.#offsetMs);
  }
  get offsetMs(): number {
    return this.#offsetMs;
  }
  /**
   * Takes a reading of the shared clock: a newer epoch whole (a reset), in the same epoch the
   * offset only forward (a smaller one is an older reading and changes nothing).
   */
  advanceTo(offsetMs: number, epoch = this.#epoch): void {
    if (epoch > this.#epoch) {
      this.#epoch = epoch;
      this.#offsetMs = offsetMs;
    } else if (epoch === this.#epoch && offsetMs > this.#offsetMs) {
      this.#offsetMs = offsetMs;
    }
  }
}
