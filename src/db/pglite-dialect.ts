import type { PGlite } from '@electric-sql/pglite';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely';
import { PostgresFamilyDialect, StatementTransactions } from './postgres-dialect.ts';
import { statementNameOf } from './prepared.ts';

/**
 * A Kysely dialect over one PGlite instance. PGlite has a single session, so a connection is
 * handed out exclusively (a transaction owns the session until it commits or rolls back).
 */
export class PGliteDialect extends PostgresFamilyDialect {
  readonly #pg: PGlite;
  constructor(pg: PGlite) {
    super();
    this.#pg = pg;
  }
  createDriver(): Driver {
    return new PGliteDriver(this.#pg);
  }
}

class PGliteConnection implements DatabaseConnection {
  readonly #pg: PGlite;
  constructor(pg: PGlite) {
    this.#pg = pg;
  }
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Every statement runs unnamed here, but a name that two texts claim is refused as on
    // PostgreSQL, so that the mistake shows on both databases.
    statementNameOf(query);
    // Without parameters the simple protocol runs the text, so a script of several statements
    // (a migration) works as it does through node-postgres.
    const result: { rows: unknown[]; affectedRows?: number; command?: string } =
      query.parameters.length === 0
        ? ((await this.#pg.exec(query.sql, { rowMode: 'object' })).at(-1) ?? { rows: [] })
        : await this.#pg.query<R>(query.sql, [...query.parameters], { rowMode: 'object' });
    const command = result.command;
    const affected = result.affectedRows;
    return {
      rows: result.rows as R[],
      ...(affected !== undefined && command !== 'SELECT' ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }
  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on PGlite');
  }
}

class PGliteDriver extends StatementTransactions implements Driver {
  readonly #pg: PGlite;
  readonly #connection: PGliteConnection;
  #queue: Promise<void> = Promise.resolve();
  #release: (() => void) | null = null;

  constructor(pg: PGlite) {
    super();
    this.#pg = pg;
    this.#connection = new PGliteConnection(pg);
  }
  async init(): Promise<void> {
    await this.#pg.waitReady;
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#queue;
    let release!: () => void;
    this.#queue = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    this.#release = release;
    return this.#connection;
  }
  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = null;
    release?.();
  }
  async destroy(): Promise<void> {
    await this.#queue;
    if (!this.#pg.closed) await this.#pg.close();
  }
}
