/**
 * The bench's load generators (scripts/bench-load.ts) and the API client's undici transport,
 * against a bare local server for a fraction of a second: each sends what it is asked to and
 * counts every answer. What they measure is the bench's business, not this test's.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { burst, closedLoop, openLoop } from '../scripts/bench-load.ts';
import { ApiClient, undiciTransport } from '../scripts/lib/api-client.ts';

describe('bench load generators', () => {
  let app: FastifyInstance;
  let origin: string;
  let pool: Pool;
  let api: ApiClient;

  before(async () => {
    app = Fastify({ logger: false });
    app.get('/', async () => ({ hello: 'world' }));
    app.post('/echo', async (request, reply) => reply.status(201).header('retry-after', '1').send(request.body));
    await app.listen({ port: 0, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    pool = new Pool(origin, { connections: 4 });
    api = new ApiClient(undiciTransport(pool));
  });
  after(async () => {
    await pool.close();
    await app.close();
  });

  it('the client sends JSON and reads the answer, its status and headers', async () => {
    const answer = await api.send<{ n: number }>({ method: 'POST', path: '/echo', body: { n: 1 } });
    assert.equal(answer.status, 201);
    assert.deepEqual(answer.body, { n: 1 });
    assert.equal(answer.headers['retry-after'], '1');
  });

  it('a closed loop counts every answer of every client', async () => {
    const result = await closedLoop(api, 2, 0.2, () => ({ method: 'GET', path: '/' }), 200);
    assert.ok(result.ok > 0);
    assert.deepEqual(result.statuses, { '200': result.ok });
    assert.ok(result.p50 <= result.p99);
  });

  it('an open loop sends every request it offers and hands each answer over', async () => {
    const answered = new Set<number>();
    const result = await openLoop(api, { rate: 50, seconds: 0.2, cap: 10 }, (i) => ({ method: 'POST', path: '/echo', body: { i } }), (i, answer) => {
      assert.deepEqual(answer.body, { i });
      answered.add(i);
    });
    assert.equal(result.offered, 10);
    assert.equal(result.ok + result.notSent, 10);
    assert.equal(answered.size, result.ok);
  });

  it('a burst sends each request on a connection of its own', async () => {
    const result = await burst(origin, 5, (i) => ({ method: 'POST', path: '/echo', body: { i } }), '/');
    assert.deepEqual(result.statuses, { '201': 5 });
    assert.equal(result.sent, 5);
  });
});
