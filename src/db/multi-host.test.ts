import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { classifyError, isDatabaseUnavailable } from '../http/errors.ts';
import { onPostgres } from '../../test/harness.ts';
import { openDatabase } from './client.ts';
import { describeConnectionFailure, describePostgres, InvalidPostgresUrl, parsePostgresUrl, postgresTarget } from './connection.ts';
import { awaitFailover, connectClient, currentServer, NoReadWriteServer } from './multi-host.ts';

describe('PostgreSQL URLs of one host or several', () => {
  it('reads every host of a multi-host URL, in order, with its port or the default one', () => {
    const url = parsePostgresUrl('postgres://postgres@127.0.0.1:6001,db-2,[::1]:6003/pix?target_session_attrs=read-write');
    assert.deepEqual(url.hosts, [
      { host: '127.0.0.1', port: 6001 },
      { host: 'db-2', port: 5432 },
      { host: '::1', port: 6003 },
    ]);
    assert.equal(url.targetSessionAttrs, 'read-write');
    assert.equal(url.multiHost, true);
  });

  it('gives each host a URL node-postgres reads: the same user, password, database and parameters, without target_session_attrs', () => {
    const url = parsePostgresUrl('postgresql://app:s%40cret@h1:6001,[::1]:6002/pix?sslmode=disable&target_session_attrs=read-write&application_name=x');
    assert.equal(url.forHost(0), 'postgresql://app:s%40cret@h1:6001/pix?sslmode=disable&application_name=x');
    assert.equal(url.forHost(1), 'postgresql://app:s%40cret@[::1]:6002/pix?sslmode=disable&application_name=x');
    const parsed = new URL(url.forHost(1));
    assert.equal(decodeURIComponent(parsed.password), 's@cret');
    assert.equal(parsed.port, '6002');
  });

  it('leaves a single-host URL to node-postgres, unless it asks for a read-write server', () => {
    for (const plain of ['postgres://postgres@127.0.0.1:5432/pix', 'postgresql://localhost/pix', 'postgres://u@h/d?target_session_attrs=any', 'postgres:///pix?host=/run/postgresql']) {
      assert.equal(parsePostgresUrl(plain).multiHost, false, plain);
    }
    const one = parsePostgresUrl('postgres://u@h:7000/d?target_session_attrs=read-write');
    assert.equal(one.multiHost, true);
    assert.deepEqual(one.hosts, [{ host: 'h', port: 7000 }]);
  });

  it('reads connect_timeout as a per-host limit in ms', () => {
    assert.equal(parsePostgresUrl('postgres://u@a,b/d?connect_timeout=3').connectTimeoutMs, 3000);
    assert.equal(parsePostgresUrl('postgres://u@a,b/d?connect_timeout=0').connectTimeoutMs, undefined);
    assert.equal(parsePostgresUrl('postgres://u@a,b/d').connectTimeoutMs, undefined);
  });

  it('refuses what it cannot honour, without repeating the URL (it may hold a password)', () => {
    const cases: [string, RegExp][] = [
      ['postgres://u:hunter2@a:99999,b/d', /port 99999/],
      ['postgres://u:hunter2@a:x/d', /is not a host\[:port\]/],
      ['postgres://u:hunter2@a,b/d?target_session_attrs=standby', /target_session_attrs must be any or read-write/],
      ['postgres://u:hunter2@a,b/d?connect_timeout=soon', /connect_timeout/],
      ['mysql://u:hunter2@a/d', /must be a URL/],
      ['not a url', /must be a URL/],
    ];
    for (const [url, message] of cases) {
      assert.throws(() => parsePostgresUrl(url), (error: Error) => error instanceof InvalidPostgresUrl && message.test(error.message) && !error.message.includes('hunter2'), url);
    }
  });

  it('names every server to a person, and the first to createdb', () => {
    const url = 'postgres://postgres@127.0.0.1:6001,127.0.0.1:6002/pix?target_session_attrs=read-write';
    assert.equal(describePostgres(url), 'PostgreSQL database "pix" on 127.0.0.1:6001,127.0.0.1:6002');
    assert.deepEqual(postgresTarget(url), { host: '127.0.0.1', port: 6001, user: 'postgres', database: 'pix', servers: '127.0.0.1:6001,127.0.0.1:6002' });
    assert.equal(describePostgres('postgres://postgres@127.0.0.1:5432/pix'), 'PostgreSQL database "pix" on 127.0.0.1:5432');
    assert.match(describeConnectionFailure(new NoReadWriteServer(['127.0.0.1:6001 (ECONNREFUSED)', '127.0.0.1:6002 (read-only)']), url)!, /^PostgreSQL at 127\.0\.0\.1:6001,127\.0\.0\.1:6002 has no read-write server now/);
  });
});

describe('the errors a failover produces are 503, never 500', () => {
  const failover: unknown[] = [
    { code: '57P01', message: 'terminating connection due to administrator command' },
    { code: '57P02', message: 'terminating connection because of crash of another server process' },
    { code: '57P03', message: 'the database system is starting up' },
    { code: '57P03', message: 'the database system is not yet accepting connections' },
    { code: '25006', message: 'cannot execute INSERT in a read-only transaction' },
    { code: '08006', message: 'connection failure' },
    { code: '08001', message: 'no read-write server' },
    new NoReadWriteServer(['127.0.0.1:6001 (ECONNREFUSED)', '127.0.0.1:6002 (read-only)']),
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6001'), { code: 'ECONNREFUSED' }),
    Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    Object.assign(new Error('socket hang up'), { code: 'ECONNABORTED' }),
    new Error('Connection terminated unexpectedly'),
    new Error('Connection terminated due to connection timeout'),
    new Error('Client has encountered a connection error and is not queryable'),
    new Error('Client was closed and is not queryable'),
    new Error('timeout expired'),
  ];
  it('classifies each as the database unavailable', () => {
    for (const error of failover) assert.equal(isDatabaseUnavailable(error), true, JSON.stringify(error) + String(error));
  });

  it('answers each with 503 and Retry-After', () => {
    const log = { warn: () => undefined, info: () => undefined, error: () => undefined };
    for (const error of failover) {
      const { body, headers } = classifyError(error as Parameters<typeof classifyError>[0], { log } as unknown as Parameters<typeof classifyError>[1]);
      assert.equal(body.statusCode, 503, String(error));
      assert.equal(body.code, 'SERVICE_UNAVAILABLE');
      assert.equal(headers?.['retry-after'], '1');
    }
  });

  it('leaves other errors alone: a failed transaction, a constraint, a timeout of a statement', () => {
    for (const error of [{ code: '25P02' }, { code: '23505' }, { code: '25001' }, new Error('timeout expired soon'), { code: '57014' }]) {
      assert.equal(isDatabaseUnavailable(error), false, JSON.stringify(error));
    }
  });
});

describe('multi-host connections on PostgreSQL', { skip: !onPostgres && 'needs a PostgreSQL server: set TEST_DATABASE_URL' }, () => {
  const server = () => new URL(process.env.TEST_DATABASE_URL!);
  /** The test server behind a host that refuses connections: port 1 on the loopback. */
  const behindDeadHost = (attrs = 'read-write') => {
    const s = server();
    return `postgres://${s.username}${s.password ? `:${s.password}` : ''}@127.0.0.1:1,${s.hostname}:${s.port || 5432}${s.pathname}?target_session_attrs=${attrs}`;
  };

  it('falls through a host that refuses to the next, keeps the read-write one and tries it first from then on', async () => {
    const url = behindDeadHost();
    const client = await connectClient(url, { application_name: 'multi-host-test' });
    try {
      const { rows } = await client.query<{ transaction_read_only: string }>('show transaction_read_only');
      assert.equal(rows[0]!.transaction_read_only, 'off');
      assert.equal(currentServer(url), `${server().hostname}:${server().port || 5432}`);
    } finally {
      await client.end();
    }
  });

  it('fails with NoReadWriteServer (SQLSTATE 08001, a 503) when no host takes a connection', async () => {
    const url = 'postgres://postgres@127.0.0.1:1,127.0.0.1:2/pix?target_session_attrs=read-write';
    await assert.rejects(connectClient(url), (error: unknown) => {
      assert.ok(error instanceof NoReadWriteServer);
      assert.equal(error.code, '08001');
      assert.match(error.message, /127\.0\.0\.1:1 \(ECONNREFUSED\), 127\.0\.0\.1:2 \(ECONNREFUSED\)/);
      assert.equal(isDatabaseUnavailable(error), true);
      return true;
    });
  });

  it('a start does not wait when no server answers at all: only a failover under way (a server answering read-only) is waited for', async () => {
    const started = performance.now();
    await awaitFailover('postgres://postgres@127.0.0.1:1,127.0.0.1:2/pix?target_session_attrs=read-write', 30_000);
    assert.ok(performance.now() - started < 1000);
    const error = await connectClient('postgres://postgres@127.0.0.1:1,127.0.0.1:2/pix?target_session_attrs=read-write').catch((e: unknown) => e);
    assert.equal((error as NoReadWriteServer).failingOver, false);
  });

  it('a pool on a multi-host URL: connections whose server ends them leave the pool, new ones are made on the next query', async () => {
    const database = await openDatabase({ url: behindDeadHost(), poolSize: 3, queueTimeoutMs: 2000, applicationName: 'multi-host-pool-test' });
    try {
      await Promise.all([1, 2, 3].map(() => sql`select pg_sleep(0.05)`.execute(database.db)));
      assert.deepEqual(database.stats(), { total: 3, idle: 3, waiting: 0 });
      assert.equal(database.server(), `${server().hostname}:${server().port || 5432}`);
      // One connection busy in a statement, the others idle: the server ends them all (57P01, as a failover does).
      const busy = sql`select pg_sleep(5)`.execute(database.db).then(
        () => null,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      const killer = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await killer.connect();
      await killer.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'multi-host-pool-test'`);
      await killer.end();
      const failed = await busy;
      assert.equal((failed as { code?: string }).code, '57P01');
      assert.equal(isDatabaseUnavailable(failed), true);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(database.stats().total, 0, 'every ended connection left the pool');
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      assert.equal(rows[0]!.one, 1);
      assert.equal(database.stats().total, 1);
    } finally {
      await database.close();
    }
  });

  it('a single-host URL is node-postgres\'s own, as before', async () => {
    const database = await openDatabase({ url: process.env.TEST_DATABASE_URL!, poolSize: 2 });
    try {
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(database.db);
      assert.equal(rows[0]!.one, 1);
      assert.equal(currentServer(process.env.TEST_DATABASE_URL!), undefined);
      assert.equal(database.server(), `${server().hostname}:${server().port || 5432}`);
    } finally {
      await database.close();
    }
  });
});
