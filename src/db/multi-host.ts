import { EventEmitter } from 'node:events';
import pg from 'pg';
import { parsePostgresUrl, type PostgresUrl } from './connection.ts';

/**
 * Connections to a replicated PostgreSQL named by a multi-host URL, as libpq makes them
 * (`postgres://u@h1:p1,h2:p2/db?target_session_attrs=read-write`): node-postgres reads one host,
 * so each connection goes host by host, the one last found read-write first, and keeps the first
 * that takes it as the URL asks. After a failover the broken connections leave their pools
 * (pg-pool drops a client that errs or cannot be queried) and the new ones find the new primary.
 * Why, and what was measured: docs/decisions/0036-failover-manager.md.
 */

/** How long one host may take to connect when the URL gives no connect_timeout: then the next is tried. */
const HOST_TIMEOUT_MS = 5_000;
const ignore = () => undefined;

/**
 * Every host was tried and none took a read-write connection (a failover under way, or every
 * server down). SQLSTATE 08001, libpq's "could not make a writable connection": a request that
 * meets it is answered 503 and may be sent again (http/errors.ts).
 */
export class NoReadWriteServer extends Error {
  override name = 'NoReadWriteServer';
  readonly code = '08001';
  /** A host answered, read-only or still starting (57P03): a failover may be under way, rather than every server down. */
  readonly failingOver: boolean;
  constructor(tried: readonly string[], failingOver = false) {
    super(`no read-write server among ${tried.join(', ')}`);
    this.failingOver = failingOver;
  }
}

/** A server that answered, but read-only (a standby, or a primary not yet confirmed by its failover manager). */
class ReadOnlyServer extends Error {
  override name = 'ReadOnlyServer';
  constructor() {
    super('read-only');
  }
}

/** The hosts of one URL in the order they are tried: the last found read-write first, then the others as written. */
class HostOrder {
  readonly url: PostgresUrl;
  #preferred = 0;
  #found = false;
  constructor(url: PostgresUrl) {
    this.url = url;
  }
  order(): number[] {
    return [this.#preferred, ...this.url.hosts.map((_, i) => i).filter((i) => i !== this.#preferred)];
  }
  found(index: number): void {
    this.#preferred = index;
    this.#found = true;
  }
  /** `host:port` of the last server a connection was kept on; undefined before the first. */
  get current(): string | undefined {
    if (!this.#found) return undefined;
    const { host, port } = this.url.hosts[this.#preferred]!;
    return `${host}:${port}`;
  }
}

/** One order per URL in the process: every pool and client on it learns where the primary went. */
const orders = new Map<string, HostOrder>();
function hostOrder(url: string): HostOrder {
  let order = orders.get(url);
  if (!order) orders.set(url, (order = new HostOrder(parsePostgresUrl(url))));
  return order;
}

/** `host:port` of the server the process last kept a connection on for a multi-host URL; undefined for others, or before the first. */
export function currentServer(url: string): string | undefined {
  return orders.get(url)?.current;
}

/** A connection being made; `aborted` (by its pool's time limit) stops it between hosts, and ends the host being tried. */
interface Attempt {
  aborted: boolean;
  current: pg.Client | undefined;
}

async function tryHost(order: HostOrder, index: number, config: pg.ClientConfig, attempt: Attempt): Promise<pg.Client> {
  const client = new pg.Client({
    ...config,
    connectionString: order.url.forHost(index),
    connectionTimeoutMillis: order.url.connectTimeoutMs ?? HOST_TIMEOUT_MS,
  });
  // A lost connection fails the query on it, never the process.
  client.on('error', ignore);
  attempt.current = client;
  try {
    await client.connect();
    if (order.url.targetSessionAttrs === 'read-write') {
      const { rows } = await client.query<{ transaction_read_only: string }>('show transaction_read_only');
      if (rows[0]?.transaction_read_only !== 'off') throw new ReadOnlyServer();
    }
    return client;
  } catch (error) {
    await client.end().catch(ignore);
    throw error;
  }
}

/**
 * A connected client on `url`: for a multi-host URL (or one asking for a read-write server), on
 * the first host in order that takes the connection as the URL asks; for any other, exactly as
 * node-postgres connects. Rejects with NoReadWriteServer when no host did.
 */
export async function connectClient(url: string, config: pg.ClientConfig = {}, attempt: Attempt = { aborted: false, current: undefined }): Promise<pg.Client> {
  const order = hostOrder(url);
  if (!order.url.multiHost) {
    const client = new pg.Client({ ...config, connectionString: url });
    client.on('error', ignore);
    await client.connect();
    return client;
  }
  const tried: string[] = [];
  let failingOver = false;
  for (const index of order.order()) {
    if (attempt.aborted) break;
    const { host, port } = order.url.hosts[index]!;
    try {
      const client = await tryHost(order, index, config, attempt);
      order.found(index);
      return client;
    } catch (error) {
      const e = error as { code?: unknown; message?: unknown };
      failingOver ||= error instanceof ReadOnlyServer || e.code === '57P03';
      tried.push(`${host}:${port} (${typeof e.code === 'string' ? e.code : String(e.message)})`);
    }
  }
  throw attempt.aborted ? new Error('timeout expired') : new NoReadWriteServer(tried, failingOver);
}

/** How long a process starting during a failover waits for the new primary before its first query fails. */
const FAILOVER_WAIT_MS = 30_000;

/**
 * Waits while the servers of a multi-host URL are failing over (one answers, read-only or still
 * starting, and none read-write), at most `waitMs`: a process started then waits for the new
 * primary instead of failing its start. Returns at once when a server is read-write, or when none
 * answers at all (its first query then fails as it would have).
 */
export async function awaitFailover(url: string, waitMs = FAILOVER_WAIT_MS): Promise<void> {
  if (!hostOrder(url).url.multiHost) return;
  const deadline = performance.now() + waitMs;
  for (;;) {
    try {
      await (await connectClient(url)).end();
      return;
    } catch (error) {
      if (!(error instanceof NoReadWriteServer && error.failingOver) || performance.now() > deadline) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The part of node-postgres's client that pg-pool reads (pg-pool/index.js: `_queryable`, `_ending`). */
interface ClientState {
  _queryable: boolean;
  _ending: boolean;
}

type Callback = (error?: Error) => void;

/**
 * The client a pool of a multi-host URL makes (pg-pool's `Client` option): its connect goes host
 * by host (connectClient); once connected it is the pg.Client of the host it kept, whose
 * queries, errors and end it passes on.
 */
class MultiHostClient extends EventEmitter {
  readonly #url: string;
  readonly #config: pg.ClientConfig;
  readonly #attempt: Attempt = { aborted: false, current: undefined };
  #client: pg.Client | undefined;

  constructor(url: string, config: pg.ClientConfig) {
    super();
    this.#url = url;
    this.#config = config;
  }

  /** pg-pool destroys this stream when a connect outlasts its connectionTimeoutMillis. */
  get connection(): { stream: { destroy(): void } } {
    return this.#client?.connection ?? { stream: { destroy: () => this.#abort() } };
  }
  get _queryable(): boolean {
    return this.#client ? (this.#client as unknown as ClientState)._queryable : false;
  }
  get _ending(): boolean {
    return this.#client ? (this.#client as unknown as ClientState)._ending : this.#attempt.aborted;
  }

  #abort(): void {
    this.#attempt.aborted = true;
    this.#attempt.current?.connection.stream.destroy();
  }

  connect(callback?: Callback): Promise<void> | undefined {
    const connected = connectClient(this.#url, this.#config, this.#attempt).then((client) => {
      if (this.#attempt.aborted) {
        void client.end().catch(ignore);
        throw new Error('timeout expired');
      }
      this.#adopt(client);
    });
    if (!callback) return connected;
    connected.then(() => callback(), callback);
    return undefined;
  }

  #adopt(client: pg.Client): void {
    this.#client = client;
    this.#attempt.current = undefined;
    client.on('error', (error) => {
      if (this.listenerCount('error') > 0) this.emit('error', error);
    });
    client.on('end', () => this.emit('end'));
    client.on('notification', (message) => this.emit('notification', message));
    client.on('notice', (message) => this.emit('notice', message));
  }

  query(...args: unknown[]): unknown {
    if (!this.#client) throw new Error('Client was closed and is not queryable');
    return (this.#client.query as (...a: unknown[]) => unknown).apply(this.#client, args);
  }

  end(callback?: Callback): Promise<void> | undefined {
    if (!this.#client) this.#abort();
    const ended = this.#client ? this.#client.end() : Promise.resolve();
    if (!callback) return ended;
    ended.then(() => callback(), callback);
    return undefined;
  }

  /** pg-pool calls these with allowExitOnIdle; node-postgres's client has them, undeclared. */
  ref(): void {
    (this.#client as unknown as { ref?: () => void } | undefined)?.ref?.();
  }
  unref(): void {
    (this.#client as unknown as { unref?: () => void } | undefined)?.unref?.();
  }
}

/** pg-pool's `Client` option for a multi-host URL: each new pooled connection goes host by host. */
export function multiHostClient(url: string): typeof pg.Client {
  hostOrder(url);
  return class extends MultiHostClient {
    constructor(config: pg.ClientConfig) {
      super(url, config);
    }
  } as unknown as typeof pg.Client;
}
