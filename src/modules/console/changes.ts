import { sql, type Expression } from 'kysely';
import type { Db, DbExecutor } from '../../db/client.ts';

/**
 * What tells the console that something changed, whichever process changed it: a one-value
 * query of a module's own table (its newest id, say), read by index. The feed reads them all in
 * one statement.
 */
export type ChangeSource = (db: DbExecutor) => Expression<unknown>;

export interface ChangeListener {
  /** The marker changed: the pages shown are out of date. */
  change(marker: string): void;
  /** Nothing changed for a while: a comment keeps the stream open through proxies. */
  ping(): void;
}

export interface ChangeFeedOptions {
  readonly intervalMs?: number;
  /** Every so many quiet reads, a ping. */
  readonly pingEvery?: number;
  readonly onError?: (error: unknown) => void;
}

/** The current marker: every source's value, in order. */
export async function readMarker(db: Db, sources: readonly ChangeSource[]): Promise<string> {
  const columns = sources.map((source, i) => sql`(${source(db)}) as ${sql.ref(`m${i}`)}`);
  const { rows } = await sql<Record<string, unknown>>`select ${sql.join(columns)}`.execute(db);
  const row = rows[0] ?? {};
  return sources.map((_, i) => {
    const value = row[`m${i}`];
    return value instanceof Date ? value.getTime().toString(36) : value === null || value === undefined ? '-' : String(value);
  }).join('.');
}

/**
 * One poll of the change marker per process, shared by every open console, and only while one
 * is open: the first listener starts it, the last one to leave stops it, so that without a
 * console the API does no work for it at all.
 */
export class ChangeFeed {
  readonly #db: Db;
  readonly #sources: readonly ChangeSource[];
  readonly #intervalMs: number;
  readonly #pingEvery: number;
  readonly #onError: (error: unknown) => void;
  /** Each listener with the marker of what it shows (undefined: whatever the next read finds). */
  readonly #listeners = new Map<ChangeListener, string | undefined>();
  #timer: NodeJS.Timeout | undefined;
  #ticks = 0;
  #closed = false;

  constructor(db: Db, sources: readonly ChangeSource[], options: ChangeFeedOptions = {}) {
    this.#db = db;
    this.#sources = sources;
    this.#intervalMs = options.intervalMs ?? 1000;
    this.#pingEvery = options.pingEvery ?? 15;
    this.#onError = options.onError ?? (() => undefined);
  }

  get listeners(): number {
    return this.#listeners.size;
  }

  /** Whether the poll is running (tests check that it stops). */
  get polling(): boolean {
    return this.#timer !== undefined;
  }

  /** The marker now, read from the database: a page carries it, so that its stream tells it of any later change. */
  current(): Promise<string> {
    return readMarker(this.#db, this.#sources);
  }

  /**
   * Listens from `since` on (the marker of the page the listener shows): a change made since
   * then, even before this call, is told at the next read. Returns the function that stops listening.
   */
  subscribe(listener: ChangeListener, since?: string): () => void {
    if (this.#closed) return () => undefined;
    this.#listeners.set(listener, since);
    if (this.#timer === undefined) this.#schedule(0);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stop();
    };
  }

  close(): void {
    this.#closed = true;
    this.#listeners.clear();
    this.#stop();
  }

  #stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedule(delayMs: number): void {
    const timer: NodeJS.Timeout = setTimeout(() => void this.#tick(timer), delayMs);
    timer.unref();
    this.#timer = timer;
  }

  /** One read; `timer` is the one that fired it: stopped (and maybe started again) meanwhile, it ends here. */
  async #tick(timer: NodeJS.Timeout): Promise<void> {
    let marker: string | undefined;
    try {
      marker = await this.current();
    } catch (error) {
      this.#onError(error);
    }
    if (this.#timer !== timer) return;
    const ping = ++this.#ticks % this.#pingEvery === 0;
    for (const [listener, known] of this.#listeners) {
      if (marker !== undefined && known !== marker) {
        this.#listeners.set(listener, marker);
        if (known !== undefined) listener.change(marker);
      } else if (ping) listener.ping();
    }
    this.#schedule(this.#intervalMs);
  }
}
