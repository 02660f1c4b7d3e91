import type { CompiledQuery, DatabaseConnection, Driver, QueryResult } from 'kysely';
import type pg from 'pg';
import { PostgresFamilyDialect, StatementTransactions } from './postgres-dialect.ts';
import { statementNameOf } from './prepared.ts';

/**
 * A Kysely dialect over a node-postgres pool, in place of Kysely's `PostgresDialect` (whose
 * connections call node-postgres's promise form, and know no statement names):
 * - every statement goes through `client.query(config, callback)`, node-postgres's callback form,
 *   its one way of calling node-postgres: with the promise form the rows of finished queries
 *   outlived young-generation collections
 *   (docs/decisions/0015-node-postgres-callback-form.md);
 * - a query that `prepared()` named runs as that named statement
 *   (docs/decisions/0016-prepared-hot-statements.md).
 */
export class NodePostgresDialect extends PostgresFamilyDialect {
  readonly #pool: pg.Pool;
  constructor(pool: pg.Pool) {
    super();
    this.#pool = pool;
  }
  createDriver(): Driver {
    return new NodePostgresDriver(this.#pool);
  }
}

class NodePostgresConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const name = statementNameOf(query);
    const values = query.parameters as unknown[];
    const config: pg.QueryConfig = name === undefined ? { text: query.sql, values } : { name, text: query.sql, values };
    try {
      return await this.#run<R>(config);
    } catch (error) {
      throw withCallerStack(error, new Error());
    }
  }

  #run<R>(config: pg.QueryConfig): Promise<QueryResult<R>> {
    return new Promise((resolve, reject) => {
      this.client.query(config, (error: Error | null, result: pg.QueryResult | pg.QueryResult[]) => {
        if (error) return reject(error);
        // A script of several statements (no parameters: the simple protocol) answers an array;
        // as with Kysely's own driver, it has no rows.
        const { command, rowCount, rows } = result as pg.QueryResult;
        const affected = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
        resolve({ rows: (rows ?? []) as R[], ...(affected ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}) });
      });
    });
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported: every statement goes through the callback form of client.query');
  }
}

/** The caller's frames after node-postgres's, as Kysely's driver gives them. */
function withCallerStack(error: unknown, caller: Error): unknown {
  if (error instanceof Error && typeof error.stack === 'string' && caller.stack) {
    error.stack += `\n${caller.stack.split('\n').slice(1).join('\n')}`;
  }
  return error;
}

class NodePostgresDriver extends StatementTransactions implements Driver {
  #pool: pg.Pool | undefined;
  readonly #connections = new WeakMap<pg.PoolClient, NodePostgresConnection>();

  constructor(pool: pg.Pool) {
    super();
    this.#pool = pool;
  }
  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    if (!this.#pool) throw new Error('driver has already been destroyed');
    const client = await this.#pool.connect();
    // `destroy` was called while the connection was being acquired.
    if (!this.#pool) {
      client.release();
      throw new Error('driver has already been destroyed');
    }
    let connection = this.#connections.get(client);
    if (!connection) {
      connection = new NodePostgresConnection(client);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as NodePostgresConnection).client.release();
  }

  async destroy(): Promise<void> {
    const pool = this.#pool;
    this.#pool = undefined;
    await pool?.end();
  }
}
