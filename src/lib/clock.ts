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
