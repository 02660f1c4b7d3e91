// npm run demo: a day of an account, end to end, printing each step.
//
// Starts the service itself on the embedded database in a temporary DATA_DIR (or uses a running
// one: PIX_API_URL=http://127.0.0.1:8080 ADMIN_TOKEN=... npm run demo; that service must then
// run with WEBHOOK_ALLOW_PRIVATE=true and WEBHOOK_CA_FILE=<the file this script prints>), and a
// local HTTPS webhook receiver with its own CA that checks every signature.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { cpfCheckDigits } from '../src/lib/document.ts';
import { formatCentavos, numberToCentavos } from '../src/lib/money.ts';
import { startWebhookReceiver, type ReceivedWebhook } from '../test/webhook-receiver.ts';
import { SERVICE_MAIN, startChild, stopChild } from './lib/processes.ts';

const bold = (s: string) => (process.stdout.isTTY ? `\x1b[1m${s}\x1b[0m` : s);
let stepNo = 0;
const step = (title: string) => console.log(`\n${bold(`${++stepNo}. ${title}`)}`);
const show = (label: string, value: unknown) => console.log(`   ${label}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);

async function startService(dataDir: string, caFile: string, adminToken: string): Promise<{ child: ChildProcess; url: string }> {
  const { child, port } = await startChild([SERVICE_MAIN, 'serve'], {
    DATABASE_URL: '',
    DATA_DIR: dataDir,
    PORT: '0',
    ADMIN_TOKEN: adminToken,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CA_FILE: caFile,
    SETTLEMENT_DELAY_MS: '500',
    LOG_LEVEL: 'warn',
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

function randomCpf(): string {
  const base = String(Math.floor(Math.random() * 1e9)).padStart(9, '0');
  return base + cpfCheckDigits(base);
}

async function main() {
  const receiver = await startWebhookReceiver();
  const given = process.env.PIX_API_URL;
  const adminToken = given ? process.env.ADMIN_TOKEN : `demo-admin-${randomUUID()}`;
  if (!adminToken) throw new Error('PIX_API_URL needs ADMIN_TOKEN (the service prints it at start)');
  const dataDir = given ? null : mkdtempSync(join(tmpdir(), 'pix-demo-'));
  const service = dataDir ? await startService(dataDir, receiver.caFile, adminToken) : null;
  const base = given ?? service!.url;
  console.log(bold('Pix API sandbox demo'));
  show('service', given ? `${base} (running)` : `${base} (started on the embedded database in ${dataDir})`);
  show('webhook receiver', `${receiver.origin} (CA ${receiver.caFile})`);

  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, expect = [200, 201, 204]) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!expect.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  };
  const admin = { authorization: `Bearer ${adminToken}` };

  try {
    step('The operator opens an account, links its certificate and gives it a PIX key');
    const account = await call<{ accountId: number; clientId: string; clientSecret: string }>('POST', '/admin/accounts', { name: 'Padaria Pão Quente Ltda', document: randomCpf() }, admin);
    const cert = await issueCertificate({ commonName: `demo-${account.accountId}` });
    await call('POST', `/admin/accounts/${account.accountId}/certificates`, { pem: cert.certPem }, admin);
    const { key } = await call<{ key: string }>('POST', `/admin/accounts/${account.accountId}/pix-keys`, { type: 'evp' }, admin);
    show('account', { accountId: account.accountId, clientId: account.clientId });
    show('PIX key (EVP)', key);

    step('Token: client credentials plus the client certificate (X-SSL-Client-Cert, URL-encoded PEM)');
    const certHeader = encodeURIComponent(cert.certPem);
    const token = await call<{ access_token: string; expires_in: number }>('POST', '/api/auth/token', { clientId: account.clientId, clientSecret: account.clientSecret }, { 'x-ssl-client-cert': certHeader });
    show('access_token', `${token.access_token.slice(0, 24)}... (expires in ${token.expires_in} s)`);
    const auth = { authorization: `Bearer ${token.access_token}`, 'x-ssl-client-cert': certHeader };

    step('Webhooks: one HTTPS URL per event type, signed with the account secret');
    for (const eventType of ['cash_in', 'cash_out', 'refund_in']) {
      await call('POST', '/api/webhooks', { url: `${receiver.origin}/pix/${eventType}`, eventType, headers: [{ key: 'X-Demo', value: 'yes' }] }, auth);
    }
    const { secret } = await call<{ secret: string }>('GET', '/api/webhooks/signing-secret', undefined, auth);
    const verifier = new Webhook(secret);
    show('registered', 'cash_in, cash_out, refund_in');
    let seen = 0;
    const nextWebhook = async (): Promise<ReceivedWebhook & { payload: { type: string; data: Record<string, unknown> } }> => {
      const all = await receiver.waitFor(++seen, 15_000);
      const hook = all[seen - 1]!;
      const payload = verifier.verify(hook.body, hook.headers) as { type: string; data: Record<string, unknown> };
      console.log(`   webhook ${hook.path} ${payload.type}, webhook-id ${hook.headers['webhook-id']}: signature verified`);
      return { ...hook, payload };
    };

    step('Balance');
    show('GET /accounts/balances', (await call('GET', '/accounts/balances', undefined, auth)).data);

    step('A charge (cob) of R$ 150.00 with its copy-and-paste BR Code and QR code');
    const txid = `demo${randomUUID().replace(/-/g, '')}`.slice(0, 32);
    const charge = await call<{ status: string; pixCopiaECola: string; loc: { id: number } }>(
      'PUT',
      `/cob/${txid}`,
      { calendario: { expiracao: 3600 }, devedor: { cpf: '52998224725', nome: 'Maria Cliente' }, valor: { original: '150.00' }, chave: key, solicitacaoPagador: 'Encomenda de pães' },
      auth,
    );
    show('status', charge.status);
    show('pixCopiaECola', charge.pixCopiaECola);
    const png = await fetch(`${base}/cob/${txid}/qrcode?format=png`, { headers: auth });
    const qrFile = join(tmpdir(), `pix-demo-${txid}.png`);
    writeFileSync(qrFile, Buffer.from(await png.arrayBuffer()));
    show('QR code', `${qrFile} (${png.headers.get('content-type')})`);

    step('The payer pays the charge (sandbox), the account is credited and notified');
    const paid = await call<{ endToEndId: string; transactionId: number }>('POST', `/sandbox/cob/${txid}/pay`, { payer: { name: 'Maria Cliente', document: '52998224725' } }, admin);
    show('endToEndId', paid.endToEndId);
    const receive = await nextWebhook();
    show('RECEIVE', receive.payload.data);
    show('charge status', (await call<{ status: string }>('GET', `/cob/${txid}`, undefined, auth)).status);

    step('A partial refund (devolucao) of R$ 20.00');
    const refund = await call<{ status: string; rtrId: string }>('PUT', `/pix/${paid.endToEndId}/devolucao/demo1`, { valor: '20.00', descricao: 'Um pão a menos' }, auth);
    show('refund', refund);
    const refundHook = await nextWebhook();
    show('REFUND', refundHook.payload.data);
    show('refund now', (await call<{ status: string }>('GET', `/pix/${paid.endToEndId}/devolucao/demo1`, undefined, auth)).status);

    step('A transfer of R$ 35.50 to a key at another institution');
    const outside = `fornecedor-${randomUUID().slice(0, 8)}@example.com`;
    await call('POST', '/sandbox/dict/keys', { key: outside, name: 'Moinho Fornecedor SA', document: '11222333000181', ispb: '60746948', bankName: 'Banco Exemplo' }, admin);
    // What a payment app shows before paying: the key's owner and institution.
    show('the key, looked up', await call('GET', `/dict/keys/${encodeURIComponent(outside)}`, undefined, auth));
    const transfer = await call<{ endToEndId: string; id: number; type: string }>(
      'POST',
      '/dict/pix',
      { pixKey: outside, payment: { currency: 'BRL', amount: 35.5 }, description: 'Farinha' },
      { ...auth, 'x-idempotency-key': randomUUID() },
    );
    show('accepted', transfer);
    show('balances while pending', (await call('GET', '/accounts/balances', undefined, auth)).data);

    step('Settlement (the worker settles NORM transfers after SETTLEMENT_DELAY_MS)');
    const transferHook = await nextWebhook();
    show('TRANSFER', transferHook.payload.data);

    step('The transaction list');
    const list = await call<{ data: { operationType: string; status: string; finalAmount: number; movementType: string; counterpart: { name: string; document: string } }[] }>(
      'GET',
      '/api/transactions',
      undefined,
      auth,
    );
    for (const t of list.data) console.log(`   ${t.operationType.padEnd(10)} ${t.movementType.padEnd(6)} ${formatCentavos(numberToCentavos(t.finalAmount) ?? 0n).padStart(8)} ${t.status.padEnd(11)} ${t.counterpart.name} ${t.counterpart.document}`);
    show('final balance', (await call('GET', '/accounts/balances', undefined, auth)).data);
    console.log(`\n${bold('Done:')} ${receiver.received.length} webhooks received, every signature verified.`);
  } finally {
    await receiver.close();
    if (service) {
      await stopChild(service.child);
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
