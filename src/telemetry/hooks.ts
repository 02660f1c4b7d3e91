/**
 * What the service asks of tracing, without loading OpenTelemetry: while tracing is off (no
 * OTEL_EXPORTER_OTLP_ENDPOINT) these do nothing and cost nothing; start.ts installs the real
 * ones. A transfer's trace outlives its request: the W3C `traceparent` of the request is kept
 * with the transaction (telemetry/repo.ts), and settlement and webhook deliveries continue that
 * trace when they come to it, in whichever process.
 */
export interface Tracing {
  readonly enabled: boolean;
  /** The W3C `traceparent` of the span running now, if any. */
  traceparent(): string | undefined;
  /** Records a span that already happened (from `startMs` to now) under `traceparent`. */
  recordSpan(traceparent: string, name: string, startMs: number, attributes: Record<string, string | number>): void;
  /** Runs `fn` inside a new span under `traceparent`: what it does (SQL, HTTP) is part of that trace. */
  inSpan<T>(traceparent: string, name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T>;
}

const off: Tracing = {
  enabled: false,
  traceparent: () => undefined,
  recordSpan: () => undefined,
  inSpan: (_traceparent, _name, _attributes, fn) => fn(),
};

let current: Tracing = off;

export const tracing = (): Tracing => current;

export function installTracing(impl: Tracing): void {
  current = impl;
}
