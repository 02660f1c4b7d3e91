// npm run cluster: a replicated PostgreSQL on this machine, kept by pg_auto_failover (a monitor, a
// primary and a standby with synchronous replication, under ./cluster/), and the multi-host
// DATABASE_URL the service takes to run on it. Idempotent: a cluster already built is started
// where it is stopped, and its URL printed again.
//
//   npm run cluster                  build (installing Debian's pg_auto_failover when missing) or start it
//   npm run cluster -- --status      the monitor's view of the nodes
//   npm run cluster -- --switchover  a planned switchover: the standby becomes the primary, and the primary its standby
//   npm run cluster -- --down        stop everything and delete ./cluster/
//
// CLUSTER_DIR (./cluster) and CLUSTER_PORT (6000: the monitor; the nodes on the next two) move it.
// Why pg_auto_failover, and what was measured: docs/decisions/0036-failover-manager.md.
import { parseArgs } from 'node:util';
import { ClusterUnavailable, PgCluster } from './lib/cluster.ts';
import { envNumber } from './lib/env.ts';

const { values } = parseArgs({ options: { down: { type: 'boolean' }, status: { type: 'boolean' }, switchover: { type: 'boolean' } } });
const cluster = new PgCluster({ dir: process.env.CLUSTER_DIR ?? 'cluster', basePort: envNumber('CLUSTER_PORT', 6000) });

async function main(): Promise<void> {
  if (values.down) {
    await cluster.down();
    console.log(`cluster: stopped, ${cluster.dir} deleted`);
    return;
  }
  if (values.status || values.switchover) {
    if (!cluster.built()) throw new ClusterUnavailable(`no cluster in ${cluster.dir}: npm run cluster builds one`);
    const started = performance.now();
    if (values.switchover) await cluster.switchover();
    if (values.switchover) console.log(`cluster: switched over in ${Math.round((performance.now() - started) / 100) / 10} s`);
    console.log((await cluster.showState()).trimEnd());
    return;
  }
  const { built, ms } = await cluster.up();
  const primary = await cluster.primary();
  console.log(`cluster: ${built ? 'built' : 'running'} in ${Math.round(ms / 100) / 10} s; primary ${primary.name} on ${primary.port}, monitor on ${cluster.monitorPort}, files in ${cluster.dir}`);
  console.log(`DATABASE_URL=${cluster.url}`);
}

main().catch((error: unknown) => {
  console.error(`cluster: ${error instanceof ClusterUnavailable ? error.message : (error as Error).stack}`);
  process.exitCode = 1;
});
