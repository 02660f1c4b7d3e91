// Backups of the cluster of npm run cluster, and a restore (docs/operations.md#backups-and-restores):
//
//   node scripts/backup-restore.ts backup                       a base backup of the primary into cluster/backups/<time>/
//   node scripts/backup-restore.ts archive                      end the current WAL segment and wait until it is archived
//   node scripts/backup-restore.ts restore <backup> <pgdata> <port> [<target time>]
//                                                               restore it with the archived WAL into a new directory, started on <port>
//   node scripts/backup-restore.ts drop <pgdata>                stop a restored server and delete its directory
//
// CLUSTER_DIR and CLUSTER_PORT name the cluster, as for npm run cluster.
import { resolve } from 'node:path';
import { archiveNow, baseBackup, dropRestored, restore } from './lib/backup.ts';
import { PgCluster } from './lib/cluster.ts';
import { envNumber } from './lib/env.ts';

const cluster = new PgCluster({ dir: process.env.CLUSTER_DIR ?? 'cluster', basePort: envNumber('CLUSTER_PORT', 6000) });
const [command, ...args] = process.argv.slice(2);
const USAGE = 'usage: node scripts/backup-restore.ts backup | archive | restore <backup> <pgdata> <port> [<target time>] | drop <pgdata>';

async function main(): Promise<void> {
  if (command === 'backup') {
    console.log(`base backup in ${await baseBackup(cluster)}`);
  } else if (command === 'archive') {
    console.log(`archived up to ${await archiveNow(cluster)}`);
  } else if (command === 'restore' && args.length >= 3) {
    const [backup, pgdata, port, targetTime] = args as [string, string, string, string | undefined];
    const restored = await restore(cluster, { backup: resolve(backup), pgdata: resolve(pgdata), port: Number(port), ...(targetTime ? { targetTime } : {}) });
    console.log(`restored into ${restored.pgdata}, running: DATABASE_URL=${restored.url}`);
  } else if (command === 'drop' && args.length === 1) {
    await dropRestored({ pgdata: resolve(args[0]!) });
    console.log(`stopped and deleted ${resolve(args[0]!)}`);
  } else {
    console.error(USAGE);
    process.exitCode = 2;
  }
}

main().catch((error: unknown) => {
  console.error(`backup-restore: ${(error as Error).message}`);
  process.exitCode = 1;
});
