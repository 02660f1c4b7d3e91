import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The operator's metrics in Prometheus's text format (`GET /metrics`, on the operator listener in
 * production). Every label has a bounded set of values: route patterns, never paths; methods,
 * status classes, outcomes and failure classes; never an account, a key or an id
 * (docs/decisions/0037-metrics-and-traces.md).
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #requests: Histogram<'method' | 'route' | 'status'>;
  readonly #transfers: Counter<'stage'>;
  readonly #webhookFailures: Counter<'class'>;
  readonly #refusedConnections: Counter;
  #source: StateSource | undefined;

  constructor() {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 20 });
    this.#requests = new Histogram({
      name: 'pix_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status class (2xx, 4xx, 5xx): their count is the request rate, the 5xx the errors',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    this.#transfers = new Counter({
      name: 'pix_transfers_total',
      help: 'Transfers accepted (created), and movements settled or failed by settlement (transfers and refunds)',
      labelNames: ['stage'],
      registers: [this.registry],
    });
    this.#webhookFailures = new Counter({
      name: 'pix_webhook_delivery_failures_total',
      help: 'Failed webhook attempts by class: the status class of the answer, or why there was none (timeout, TLS failure, ...)',
      labelNames: ['class'],
      registers: [this.registry],
    });
    this.#refusedConnections = new Counter({
      name: 'pix_connections_refused_total',
      help: 'Connections closed on arrival because their source already held MAX_CONNECTIONS_PER_SOURCE',
      registers: [this.registry],
    });
    for (const stage of ['created', 'settled', 'failed']) this.#transfers.inc({ stage }, 0);
    this.#poolGauges();
  }

  /** Counts every answer of `app` (call once per listener). */
  observeRequests(app: FastifyInstance): void {
    app.addHook('onResponse', async (request: FastifyRequest, reply: FastifyReply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      this.#requests.observe({ method: request.method, route, status: `${Math.floor(reply.statusCode / 100)}xx` }, reply.elapsedTime / 1000);
    });
  }

  connectionRefused(): void {
    this.#refusedConnections.inc();
  }

  transferCreated(): void {
    this.#transfers.inc({ stage: 'created' });
  }

  settled(result: { settled: number; failed: number }): void {
    if (result.settled > 0) this.#transfers.inc({ stage: 'settled' }, result.settled);
    if (result.failed > 0) this.#transfers.inc({ stage: 'failed' }, result.failed);
  }

  /** One webhook attempt's outcome (worker deliveries and resends alike). */
  webhookAttempt(attempt: { success: boolean; statusCode: number | null; failure?: string | undefined }): void {
    if (attempt.success) return;
    const kind = attempt.statusCode !== null ? `http_${Math.floor(attempt.statusCode / 100)}xx` : (attempt.failure ?? 'unknown').replaceAll(' ', '_');
    this.#webhookFailures.inc({ class: kind });
  }

  /** Where the gauges read when scraped come from: queues, lags, breakers, the database's role. */
  setState(source: StateSource): void {
    if (!this.#source) this.#stateGauges();
    this.#source = source;
  }

  /** The state of this scrape: read once, when text() starts, for every gauge that shows part of it. */
  #state: Promise<State | null> | undefined;

  /** The state, or null when the database could not say (the gauges then keep their last values). */
  #readState(): Promise<State | null> {
    return this.#source ? this.#source.read().catch(() => null) : Promise.resolve(null);
  }

  #stateGauges(): void {
    const current = () => this.#state ?? this.#readState();
    const gauge = (name: string, help: string, pick: (s: State) => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        async collect() {
          const s = await current();
          if (s) this.set(pick(s));
        },
      });
    gauge('pix_settlement_queue_depth', 'Transfers and refunds waiting to settle', (s) => s.settlementQueued);
    gauge('pix_settlement_lag_seconds', 'How long the oldest movement that is due has waited for settlement', (s) => s.settlementLagSeconds);
    gauge('pix_webhook_deliveries_pending', 'Webhook deliveries still to make (first attempts and retries)', (s) => s.deliveriesPending);
    gauge('pix_webhook_oldest_pending_age_seconds', 'Age of the oldest delivery that is due', (s) => s.oldestDueDeliverySeconds);
    gauge('pix_webhook_open_circuit_breakers', 'Receiving destinations whose circuit breaker is open', (s) => s.openBreakers);
    gauge('pix_database_primary', '1 when this process writes to a primary (read-write), 0 on a standby', (s) => (s.primary ? 1 : 0));
  }

  /** Connections of one pool (the API's, the lists', the worker's), read when scraped. */
  addPool(name: string, stats: () => PoolStats): void {
    this.#pools.set(name, stats);
  }

  readonly #pools = new Map<string, () => PoolStats>();

  #poolGauges(): void {
    const pools = this.#pools;
    const gauge = (name: string, help: string, pick: (s: PoolStats) => number) =>
      new Gauge({
        name,
        help,
        labelNames: ['pool'],
        registers: [this.registry],
        collect() {
          for (const [pool, stats] of pools) this.set({ pool }, pick(stats()));
        },
      });
    gauge('pix_database_connections_in_use', 'Database connections lent out, by pool', (s) => s.total - s.idle);
    gauge('pix_database_connections_waiting', 'Requests waiting for a database connection, by pool', (s) => s.waiting);
  }

  async text(): Promise<string> {
    this.#state = this.#source ? this.#readState() : undefined;
    try {
      return await this.registry.metrics();
    } finally {
      this.#state = undefined;
    }
  }
}

export interface State {
  settlementQueued: number;
  settlementLagSeconds: number;
  deliveriesPending: number;
  oldestDueDeliverySeconds: number;
  openBreakers: number;
  primary: boolean;
}

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

export interface StateSource {
  read(): Promise<State>;
}


/** GET /metrics, beside the operator API (its listener, its token). */
export function metricsRoute(metrics: ServiceMetrics) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get(
      '/metrics',
      {
        schema: {
          operationId: 'metrics',
          tags: ['Operations'],
          summary: 'The Prometheus metrics of this process',
          description: 'On the operator listener (ADMIN_PORT) in production, with the admin token. Labels are route patterns, never paths or accounts.',
          security: [{ adminToken: [] }],
          response: { 200: { description: 'Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } } },
        },
      },
      async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.text()),
    );
  };
}
