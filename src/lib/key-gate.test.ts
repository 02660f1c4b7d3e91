import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyGate, KeyGateFull } from './key-gate.ts';

/** A task that runs until the test lets it finish. */
function task() {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let started = false;
  return {
    run: async () => {
      started = true;
      await done;
    },
    finish,
    get started() {
      return started;
    },
  };
}

/** Lets the promise callbacks already due run (a handed-over slot starts its task). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('KeyGate', () => {
  it('runs up to `concurrency` tasks of a key at once; the next waits and starts, in order, when one finishes', async () => {
    const gate = new KeyGate({ concurrency: 2, maxWaiting: 4, waitMs: 10_000 });
    const tasks = [task(), task(), task(), task()];
    const runs = tasks.map((t) => gate.run('a', t.run));
    await settle();
    assert.deepEqual(tasks.map((t) => t.started), [true, true, false, false]);
    assert.deepEqual([gate.running('a'), gate.waiting('a')], [2, 2]);
    tasks[1]!.finish();
    await settle();
    assert.deepEqual(tasks.map((t) => t.started), [true, true, true, false]);
    for (const t of tasks) t.finish();
    await Promise.all(runs);
    assert.deepEqual([gate.running('a'), gate.waiting('a'), gate.size], [0, 0, 0]);
  });

  it("one key's tasks never hold another key's", async () => {
    const gate = new KeyGate({ concurrency: 1, maxWaiting: 0, waitMs: 10_000 });
    const busy = task();
    const run = gate.run('a', busy.run);
    await assert.rejects(gate.run('a', async () => undefined), KeyGateFull);
    assert.equal(await gate.run('b', async () => 'b ran'), 'b ran');
    busy.finish();
    await run;
  });

  it('refuses at once when `maxWaiting` already wait, and after `waitMs` a task that waited that long', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const gate = new KeyGate({ concurrency: 1, maxWaiting: 1, waitMs: 250 });
    const busy = task();
    const run = gate.run('a', busy.run);
    const waiting = gate.run('a', async () => 'late');
    await assert.rejects(gate.run('a', async () => undefined), (e: unknown) => e instanceof KeyGateFull && e.reason === 'queue');
    t.mock.timers.tick(249);
    assert.equal(gate.waiting('a'), 1);
    t.mock.timers.tick(1);
    await assert.rejects(waiting, (e: unknown) => e instanceof KeyGateFull && e.reason === 'wait');
    assert.deepEqual([gate.running('a'), gate.waiting('a')], [1, 0]);
    busy.finish();
    await run;
    assert.equal(gate.size, 0);
  });

  it('a task that fails frees its slot, and its error reaches the caller', async () => {
    const gate = new KeyGate({ concurrency: 1, maxWaiting: 1, waitMs: 10_000 });
    await assert.rejects(gate.run('a', async () => Promise.reject(new Error('boom'))), /boom/);
    assert.equal(gate.size, 0);
    assert.equal(await gate.run('a', async () => 1), 1);
  });

  it('a slot handed to a waiter cancels its timer: it is not refused later while running', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const gate = new KeyGate({ concurrency: 1, maxWaiting: 1, waitMs: 100 });
    const first = task();
    const second = task();
    const runs = [gate.run('a', first.run), gate.run('a', second.run)];
    first.finish();
    await settle();
    assert.ok(second.started);
    t.mock.timers.tick(1_000);
    second.finish();
    await Promise.all(runs);
    assert.equal(gate.size, 0);
  });

  it('needs concurrency >= 1', () => {
    assert.throws(() => new KeyGate({ concurrency: 0, maxWaiting: 1, waitMs: 1 }), RangeError);
  });
});
