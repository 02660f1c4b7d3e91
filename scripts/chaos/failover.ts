// The failover fault of `npm run chaos -- --failover`: the bank test on a replicated PostgreSQL
// (pg_auto_failover, as npm run cluster builds it, in a folder of its own), whose primary is lost
// while transfers flow: kill -9 of its postmaster and of its keeper with it. The monitor promotes
// the standby, the services find it by themselves, and a few seconds later the old primary is
// brought back, as a standby of the new one. Then the next failover, the other way.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgCluster } from '../lib/cluster.ts';
import { query } from '../lib/pg.ts';
import { freePortRange } from '../lib/processes.ts';
import { log, sleep } from './common.ts';
import type { Bank } from './workload.ts';

/** A cluster of its own, on ports nobody uses, in a temporary folder. */
export async function chaosCluster(): Promise<PgCluster> {
  const base = await freePortRange(3);
  const cluster = new PgCluster({ dir: join(tmpdir(), `pix-chaos-cluster-${process.pid}`), basePort: base });
  const { ms } = await cluster.up();
  log(`cluster of pg_auto_failover built in ${Math.round(ms)} ms: monitor on ${base}, nodes on ${base + 1} and ${base + 2}`);
  return cluster;
}

/** One failover: when the primary was lost, when the standby took writes, when the old primary was back as a standby. */
export interface Failover {
  node: string;
  killAt: number;
  promotedMs: number;
  rejoinedMs: number | null;
}

/** The old primary back, once the new one has taken over: its keeper started, waiting until both are settled. */
async function bringBack(cluster: PgCluster, entry: Failover, node: PgCluster['nodes'][number]): Promise<void> {
  await sleep(2000);
  log(`bringing ${node.name} back as a standby`);
  await cluster.restartNode(node);
  await cluster.waitHealthy(120_000);
  entry.rejoinedMs = Math.round(performance.now() - entry.killAt);
  log(`${node.name} is a standby again, ${entry.rejoinedMs} ms after its loss`);
}

/**
 * `count` failovers spread over the run, each once both nodes are settled; resolves, once the
 * last old primary is back, with what each took.
 */
export async function injectFailovers(cluster: PgCluster, s: { seconds: number; count: number }, signal: AbortSignal): Promise<Failover[]> {
  const started = performance.now();
  const done: Failover[] = [];
  for (let i = 1; i <= s.count; i++) {
    const due = started + (i * s.seconds * 1000) / (s.count + 1);
    while (performance.now() < due && !signal.aborted) await sleep(100);
    if (signal.aborted) break;
    await cluster.waitHealthy(120_000);
    const node = await cluster.primary();
    log(`kill -9 of the primary ${node.name}'s postmaster and keeper`);
    cluster.killNode(node);
    const entry: Failover = { node: node.name, killAt: performance.now(), promotedMs: 0, rejoinedMs: null };
    done.push(entry);
    await cluster.waitFor('the standby promoted', (states) => states.some((n) => n.name !== node.name && (n.reported === 'wait_primary' || n.reported === 'primary') && n.goal === n.reported), 60_000);
    entry.promotedMs = Math.round(performance.now() - entry.killAt);
    log(`the monitor promoted the standby ${entry.promotedMs} ms after the kill`);
    await bringBack(cluster, entry, node);
  }
  return done;
}

/** For each failover, the time from the kill to the first movement acknowledged (201) among those sent after it. */
export function killToFirstWrite(failovers: readonly Failover[], bank: Bank): (number | null)[] {
  const answers = [...bank.transfers, ...bank.refunds].flatMap((e) => e.answers).concat(bank.incoming.map((i) => i.answer));
  return failovers.map((f) => {
    const after = answers.filter((a) => a.status === 201 && a.sentAt > f.killAt).map((a) => a.at);
    return after.length > 0 ? Math.round(Math.min(...after) - f.killAt) : null;
  });
}

/** Both nodes hold the same movements (synchronous replication: the standby has every commit); polled a while, its replay may trail. */
export async function standbyMatches(cluster: PgCluster, database: string): Promise<{ primary: number; standby: number }> {
  const primary = await cluster.primary();
  const standby = cluster.nodes.find((n) => n !== primary)!;
  const count = async (node: typeof primary) =>
    (await query<{ n: number }>(cluster.nodeUrl(node, database), 'select count(*)::int as n from transactions'))[0]!.n;
  let last = { primary: -1, standby: -2 };
  for (let i = 0; i < 50; i++) {
    last = { primary: await count(primary), standby: await count(standby) };
    if (last.primary === last.standby) break;
    await sleep(100);
  }
  return last;
}
