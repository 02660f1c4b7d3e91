import { register } from 'node:module';
import { installTracing, type Tracing } from './hooks.ts';

/**
 * Starts OpenTelemetry tracing (OTEL_EXPORTER_OTLP_ENDPOINT set): spans of the HTTP server and of
 * Fastify's routes, of every SQL statement (pg) and of outgoing requests (undici: webhooks, the
 * payer's fetches, which carry W3C `traceparent`), exported over OTLP/HTTP. It must run before
 * anything it instruments is imported (src/main.ts imports the service afterwards), and the ESM
 * loader hook lets it patch modules that ESM imports. The standard OTEL_* variables configure
 * the exporter, the sampler and the resource. Returns what flushes and stops it.
 */
/** The request id (`x-request-id`), on the request's spans and, through RequestIdToChildren, on every span under them. */
const REQUEST_ID = 'pix.request_id';

export async function startTelemetry(): Promise<() => Promise<void>> {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [{ NodeSDK, tracing: sdkTracing, api }, { OTLPTraceExporter }, { HttpInstrumentation }, { PgInstrumentation }, { UndiciInstrumentation }, { FastifyOtelInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-undici'),
    import('@fastify/otel'),
  ]);
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'pix-api',
    spanProcessors: [requestIdToChildren(api.trace), new sdkTracing.BatchSpanProcessor(new OTLPTraceExporter())],
    instrumentations: [
      // The OTLP exporter's own requests are not traced; every server span carries the request id.
      new HttpInstrumentation({
        ignoreOutgoingRequestHook: () => true,
        applyCustomAttributesOnSpan: (span, _request, response) => {
          const id = 'getHeader' in response ? response.getHeader('x-request-id') : undefined;
          if (id !== undefined) span.setAttribute(REQUEST_ID, String(id));
        },
      }),
      new FastifyOtelInstrumentation({ registerOnInitialization: true, requestHook: (span, request) => span.setAttribute(REQUEST_ID, String(request.id)) }),
      new PgInstrumentation({ requireParentSpan: true }),
      new UndiciInstrumentation(),
    ],
  });
  sdk.start();
  installTracing(await hooksOverApi());
  return () => sdk.shutdown();
}

/** Every span started under a span that carries the request id carries it too (SQL, outgoing requests). */
function requestIdToChildren(trace: typeof import('@opentelemetry/api').trace) {
  type Started = { setAttribute(key: string, value: string): unknown };
  return {
    onStart(span: Started, parent: import('@opentelemetry/api').Context) {
      const id = (trace.getSpan(parent) as unknown as { attributes?: Record<string, unknown> } | undefined)?.attributes?.[REQUEST_ID];
      if (typeof id === 'string') span.setAttribute(REQUEST_ID, id);
    },
    onEnd: () => undefined,
    forceFlush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}

/** The hooks the service calls (telemetry/hooks.ts), over OpenTelemetry's API. */
async function hooksOverApi(): Promise<Tracing> {
  const { context, propagation, trace, SpanStatusCode } = await import('@opentelemetry/api');
  const tracer = trace.getTracer('pix-api');
  const parentOf = (traceparent: string) => propagation.extract(context.active(), { traceparent });
  return {
    enabled: true,
    traceparent() {
      const carrier: Record<string, string> = {};
      propagation.inject(context.active(), carrier);
      return carrier.traceparent;
    },
    recordSpan(traceparent, name, startMs, attributes) {
      tracer.startSpan(name, { startTime: startMs, attributes }, parentOf(traceparent)).end();
    },
    inSpan(traceparent, name, attributes, fn) {
      return tracer.startActiveSpan(name, { attributes }, parentOf(traceparent), async (span) => {
        try {
          return await fn();
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      });
    },
  };
}
