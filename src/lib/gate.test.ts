import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Gate, GateFull } from './gate.ts';

/** A task that finishes when told to, recording when it started. */
function controlled(log: string[], name: string) {
  let finish!: (value: string) => void;
  const done = new Promise<string>((resolve) => (finish = resolve));
  return {
    task: () => {
      log.push(`start ${name}`);
      return done;
    },
    finish: () => finish(name),
  };
}

describe('Gate', () => {
  it('runs at most `concurrency` tasks, then queues `maxWaiting` in arrival order, then refuses at once', async () => {
    const gate = new Gate({ concurrency: 2, maxWaiting: 2 });
    const log: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((name) => controlled(log, name));
    const results = tasks.map((t) => gate.run(t.task));
    await Promise.resolve();
    assert.deepEqual(log, ['start a', 'start b']);
    assert.deepEqual([gate.running, gate.waiting], [2, 2]);
    await assert.rejects(gate.run(async () => 'e'), GateFull);

    tasks[1]!.finish();
    assert.equal(await results[1], 'b');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(log, ['start a', 'start b', 'start c']);
    assert.deepEqual([gate.running, gate.waiting], [2, 1]);

    for (const t of tasks) t.finish();
    assert.deepEqual(await Promise.all(results), ['a', 'b', 'c', 'd']);
    assert.deepEqual([gate.running, gate.waiting], [0, 0]);
  });

  it('a failing task frees its slot for the next one', async () => {
    const gate = new Gate({ concurrency: 1, maxWaiting: 1 });
    const failing = gate.run(async () => {
      throw new Error('boom');
    });
    const next = gate.run(async () => 'next');
    await assert.rejects(failing, /boom/);
    assert.equal(await next, 'next');
    assert.deepEqual([gate.running, gate.waiting], [0, 0]);
  });

  it('with maxWaiting 0 refuses whatever finds every slot taken', async () => {
    const gate = new Gate({ concurrency: 1, maxWaiting: 0 });
    const log: string[] = [];
    const a = controlled(log, 'a');
    const first = gate.run(a.task);
    await assert.rejects(gate.run(async () => 'b'), GateFull);
    a.finish();
    assert.equal(await first, 'a');
    assert.equal(await gate.run(async () => 'c'), 'c');
  });

  it('refuses a gate that could never run anything', () => {
    assert.throws(() => new Gate({ concurrency: 0, maxWaiting: 1 }), RangeError);
  });
});
