// The bench's webhook receiver, in a process of its own: in the bench process it shared an event
// loop with the open-loop load generator, whose sends it delayed. Tells the parent its origin
// and CA file, then answers "what arrived since entry N" with [endToEndId, arrival ms] pairs.
// BENCH_RECEIVER_DELAY_MS makes it a slow receiver: each answer comes that long after its request.
import { startWebhookReceiver } from '../test/webhook-receiver.ts';
import { envNumber } from './lib/env.ts';

const receiver = await startWebhookReceiver();
const delayMs = envNumber('BENCH_RECEIVER_DELAY_MS', 0);
if (delayMs > 0) receiver.respond = () => new Promise((resolve) => setTimeout(() => resolve(200), delayMs).unref());
const arrivals: [string, number][] = [];
let parsed = 0;

function collect(): void {
  for (; parsed < receiver.received.length; parsed++) {
    const r = receiver.received[parsed]!;
    const e2e = (JSON.parse(r.body) as { data?: { endToEndId?: string } }).data?.endToEndId;
    arrivals.push([e2e ?? '', r.at.getTime()]);
  }
}

process.on('message', (message: { since?: number; close?: boolean }) => {
  if (message.close) {
    void receiver.close().then(() => process.exit(0));
    return;
  }
  collect();
  process.send!({ arrivals: arrivals.slice(message.since ?? 0), total: arrivals.length });
});
process.send!({ origin: receiver.origin, caFile: receiver.caFile });
