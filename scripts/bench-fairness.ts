// The bench's fairness scenario (scripts/bench.ts runs it): one account floods a slow receiver
// of its own while another account's webhooks go to a fast one, as in the attack that delayed
// the other account's deliveries by 16.9 s. Account A registers three cash_in URLs on a receiver
// that answers after 12 s (past the 10 s timeout) and receives 150 Pix at 10/s; account C
// receives Pix at 5/s meanwhile, its cash_in URL on the fast receiver. Measured: C's webhook
// lag, from the 201 of its incoming Pix (the notification is committed with it) to its
// arrival. Target: p99 under 1 s.
import type { AccountApi, ApiClient, OperatorApi } from './lib/api-client.ts';
import { arrivals, type Receiver } from './lib/receivers.ts';
import { envNumber } from './lib/env.ts';

export const SLOW_RECEIVER_DELAY_MS = envNumber('BENCH_SLOW_RECEIVER_MS', 12_000);
const FLOOD_RATE = envNumber('BENCH_FLOOD_RATE', 10);
const FLOOD_SECONDS = envNumber('BENCH_FLOOD_SECONDS', 15);
const FLOOD_URLS = 3;
const VICTIM_RATE = 5;
/** How long to wait, once the flood is over, for the victim's webhooks. */
const VICTIM_WAIT_MS = 20_000;

export interface FairnessAccount {
  api: AccountApi;
  /** Its EVP key, where the sandbox's incoming Pix go. */
  key: string;
}

export interface FairnessResult {
  floodPix: number;
  floodUrls: number;
  slowDelayMs: number;
  /** Requests the slow receiver got during the scenario, and the attempts logged for the flooding account (by error). */
  floodRequests: number;
  floodAttempts: number;
  floodErrors: Record<string, number>;
  victimSent: number;
  /** Ascending lags, ms (Infinity: never arrived). */
  victimLags: number[];
}

interface Context {
  http: ApiClient;
  operator: OperatorApi;
  attacker: FairnessAccount;
  victim: FairnessAccount;
  fast: Receiver;
  slow: Receiver;
}

/** Pix arriving at `rate` per second for `seconds` to the account's key; each answer's end-to-end id and when it came. */
async function incoming(ctx: Context, account: FairnessAccount, rate: number, seconds: number, name: string) {
  const answered = new Map<string, number>();
  const started = Date.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < rate * seconds; i++) {
    const wait = started + (i * 1000) / rate - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(
      ctx.http.send(ctx.operator.incomingPixRequest({ pixKey: account.key, amount: '1.00', payer: { name, document: '52998224725' } })).then((answer) => {
        if (answer.status === 201) answered.set(answer.body.endToEndId as string, Date.now());
      }),
    );
  }
  await Promise.all(pending);
  return answered;
}

async function register(account: FairnessAccount, url: string): Promise<number> {
  return (await account.api.registerWebhook({ url, eventType: 'cash_in' })).id;
}

export async function fairnessRun(ctx: Context): Promise<FairnessResult> {
  const attackerIds: number[] = [];
  for (let i = 1; i <= FLOOD_URLS; i++) attackerIds.push(await register(ctx.attacker, `${ctx.slow.origin}/flood/${i}`));
  const victimId = await register(ctx.victim, `${ctx.fast.origin}/victim`);
  const since = (await ctx.fast.arrivals(0)).total;
  const slowSince = (await ctx.slow.arrivals(0)).total;
  try {
    const [flood, victim] = await Promise.all([
      incoming(ctx, ctx.attacker, FLOOD_RATE, FLOOD_SECONDS, 'Flood'),
      incoming(ctx, ctx.victim, VICTIM_RATE, FLOOD_SECONDS, 'Victim payer'),
    ]);
    const delivered = await arrivals(ctx.fast, new Set(victim.keys()), VICTIM_WAIT_MS, since);
    const victimLags = [...victim].map(([e2e, at]) => (delivered.first.get(e2e) ?? Infinity) - at).sort((x, y) => x - y);
    const floodRequests = (await ctx.slow.arrivals(0)).total - slowSince;
    const logs = await ctx.attacker.api.webhookLogs({ size: 100, eventType: 'cash_in' });
    const floodErrors: Record<string, number> = {};
    for (const l of logs.data) floodErrors[l.error ?? 'ok'] = (floodErrors[l.error ?? 'ok'] ?? 0) + 1;
    return {
      floodPix: flood.size,
      floodUrls: FLOOD_URLS,
      slowDelayMs: SLOW_RECEIVER_DELAY_MS,
      floodRequests,
      floodAttempts: logs.metadata.total,
      floodErrors,
      victimSent: victim.size,
      victimLags,
    };
  } finally {
    for (const [account, id] of [...attackerIds.map((id) => [ctx.attacker, id] as const), [ctx.victim, victimId] as const]) {
      await ctx.http.send(account.api.request('PATCH', `/api/webhooks/${id}`, { isActive: false }));
    }
  }
}
