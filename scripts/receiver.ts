/**
 * A webhook receiver to start from (docs/guide/receiver-in-five-minutes.md): it checks each
 * delivery's Standard Webhooks signature with the account's secret, takes each message once
 * (a second delivery of one webhook-id is answered 200 and not processed again), and prints one
 * line per delivery.
 *
 *   WEBHOOK_SECRET=whsec_... node scripts/receiver.ts [--port 3000]
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const { values } = parseArgs({ options: { port: { type: 'string', default: '3000' }, host: { type: 'string', default: '127.0.0.1' } } });
const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  process.stderr.write('WEBHOOK_SECRET is required: GET /api/webhooks/signing-secret gives it\n');
  process.exit(1);
}
const webhook = new Webhook(secret);
/** The message ids processed: a receiver keeps these in its database, with what it did. */
const seen = new Set<string>();

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
    const id = headers['webhook-id'] ?? '-';
    let payload: { type?: string; data?: { endToEndId?: string; id?: unknown }; pix?: unknown[] };
    try {
      payload = webhook.verify(body, headers) as typeof payload;
    } catch (error) {
      const why = error instanceof WebhookVerificationError ? error.message : 'not JSON';
      process.stdout.write(`${new Date().toISOString()} ${req.url} ${id} refused: ${why}\n`);
      res.writeHead(400).end();
      return;
    }
    const what = payload.type ?? (payload.pix ? 'pix callback' : 'callback');
    if (seen.has(id)) {
      process.stdout.write(`${new Date().toISOString()} ${req.url} ${id} ${what}: a duplicate, already processed\n`);
    } else {
      seen.add(id);
      process.stdout.write(`${new Date().toISOString()} ${req.url} ${id} ${what} ${payload.data?.endToEndId ?? ''}\n`);
    }
    res.writeHead(200).end();
  });
});
server.listen(Number(values.port), values.host, () => process.stdout.write(`receiving on http://${values.host}:${values.port}\n`));
