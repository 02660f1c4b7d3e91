-- While tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT), the W3C traceparent of the request that made
-- a transfer, so that its settlement and its webhook deliveries continue that request's trace in
-- whichever process comes to them (docs/decisions/0037-metrics-and-traces.md). Empty otherwise.
CREATE TABLE trace_contexts (
  transaction_id bigint      PRIMARY KEY,
  traceparent    text        NOT NULL CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'),
  created_at     timestamptz NOT NULL
);
CREATE INDEX trace_contexts_created_idx ON trace_contexts (created_at);
