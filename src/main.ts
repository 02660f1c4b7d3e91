/**
 * The one binary: `serve` (API and worker), `worker`, `migrate` and the operator commands
 * (src/commands.ts). With OTEL_EXPORTER_OTLP_ENDPOINT set, tracing starts first, before anything
 * it instruments is loaded; without it, nothing of OpenTelemetry is loaded at all
 * (docs/decisions/0037-metrics-and-traces.md).
 */
import { enableCompileCache } from 'node:module';
import { fileURLToPath } from 'node:url';

// V8 keeps the compiled code of the modules (the TypeScript stripped) between starts, beside the
// installed packages (where `npm test` keeps its own): a later start loads them without compiling
// them again. Where that cannot be written, nothing is cached and nothing fails.
enableCompileCache(fileURLToPath(new URL('../node_modules/.cache/node-compile', import.meta.url)));

// A bad variable is told before the rest of the service is loaded: in a fraction of the time.
const { ConfigError, loadConfig } = await import('./config.ts');
try {
  if (!['help', '--help', '-h'].includes(process.argv[2] ?? '')) loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`Invalid configuration: ${error.message}\n`);
  process.exit(1);
}
const telemetry = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ? await (await import('./telemetry/start.ts')).startTelemetry() : undefined;
(await import('./commands.ts')).run(process.argv.slice(2), telemetry);
