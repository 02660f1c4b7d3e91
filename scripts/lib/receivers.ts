// The bench's webhook receivers, each in a process of its own (scripts/bench-receiver.ts).
import { fork, type ChildProcess } from 'node:child_process';

export interface Receiver {
  origin: string;
  caFile: string;
  /** [endToEndId, arrival ms] of every webhook from entry `since` on, and how many arrived in all. */
  arrivals(since: number): Promise<{ arrivals: [string, number][]; total: number }>;
  close(): Promise<void>;
}

/** A receiver that answers 200 at once, or `delayMs` after each request. */
export async function startReceiver(delayMs = 0): Promise<Receiver> {
  const child: ChildProcess = fork(new URL('../bench-receiver.ts', import.meta.url).pathname, [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BENCH_RECEIVER_DELAY_MS: String(delayMs) },
  });
  let exited: ((code: number | null) => void) | undefined;
  child.on('exit', (code) => exited?.(code));
  /** The child's next message (one question at a time: the caller awaits each answer). */
  const next = <T>() =>
    new Promise<T>((resolve, reject) => {
      exited = (code) => reject(new Error(`webhook receiver exited (${code})`));
      child.once('message', (m) => resolve(m as T));
    });
  const { origin, caFile } = await next<{ origin: string; caFile: string }>();
  return {
    origin,
    caFile,
    arrivals(since) {
      const reply = next<{ arrivals: [string, number][]; total: number }>();
      child.send({ since });
      return reply;
    },
    close: () =>
      new Promise<void>((resolve) => {
        exited = () => resolve();
        child.send({ close: true });
      }),
  };
}

/**
 * First arrival at the receiver of each end-to-end id expected, ms since the epoch, looking at
 * the receiver's entries from `since` on; waits up to `timeoutMs` for all. `received` counts the
 * entries from `since` on, `total` all of them.
 */
export async function arrivals(receiver: Receiver, expected: ReadonlySet<string>, timeoutMs: number, since = 0) {
  const first = new Map<string, number>();
  const started = Date.now();
  let seen = since;
  for (;;) {
    const got = await receiver.arrivals(seen);
    seen += got.arrivals.length;
    for (const [e2e, at] of got.arrivals) if (expected.has(e2e) && !first.has(e2e)) first.set(e2e, at);
    if (first.size >= expected.size || Date.now() - started >= timeoutMs) {
      return { first, waitedMs: Date.now() - started, received: got.total - since, total: got.total };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

