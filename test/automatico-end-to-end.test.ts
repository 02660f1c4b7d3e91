/**
 * Pix Automático end to end, over real HTTP, with the callbacks on HTTPS to a receiver that
 * demands a client certificate: a receiver registers webhookrec and webhookcobr, makes a
 * recurrence and the first month's cob, takes the composite code (journey 3), and the sandbox
 * payer pays it and approves the recurrence; three monthly cycles follow on the test clock, the
 * second failing for lack of funds in the morning and the evening, then retried and paid. Every
 * callback arrives signed, over mutual TLS, and valid under BCB's schemas.
 */
import assert from 'node:assert/strict';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { saoPauloDay } from '../src/modules/cobv/due.ts';
import { addDays } from '../src/modules/recurrences/cycle.ts';
import { webhookClientCertificate } from '../src/modules/webhooks/client-certificate.ts';
import { deliverDue } from '../src/modules/webhooks/delivery.ts';
import { WebhookSender } from '../src/modules/webhooks/sender.ts';
import { createClient, evpKey, randomCnpj, randomCpf, type TestClient } from './factories.ts';
import { adminHeaders, startTestApp, type TestApp } from './harness.ts';
import { assertBcbAnswer, assertBcbDefinition } from './support/bcb-schemas.ts';
import { freePort } from './processes.ts';
import { mutualTlsReceiver } from './support/mutual-tls-receiver.ts';

type Json = Record<string, unknown>;

describe('Pix Automático end to end: webhooks, journey 3, three monthly cycles on the clock, a failed attempt retried, callbacks over mutual TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pix-auto-e2e-'));
  let t: TestApp;
  let origin: string;
  let receiver: TestClient;
  let headers: Record<string, string>;
  let callbacks: Awaited<ReturnType<typeof mutualTlsReceiver>>;
  let sender: WebhookSender;
  let clientFingerprint: string;
  let secret: string;
  let idRec: string;
  const cycles: { txid: string; due: string }[] = [];

  const call = async (method: string, path: string, body?: unknown, extra: Record<string, string> = headers) => {
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: { ...extra, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), text, body: (text === '' ? {} : JSON.parse(text)) as Json };
  };
  const v2 = (method: string, path: string, body?: unknown) => call(method, `/v2${path}`, body);
  const admin = (path: string, body?: unknown) => call('POST', path, body, adminHeaders);
  const at = (day: string, hhmm: string) => new Date(`${day}T${hhmm}:00.000-03:00`).toISOString();
  const today = () => saoPauloDay(t.controls!.clock.now());
  const deliver = () => deliverDue({ db: t.db, clock: t.controls!.clock, sender });
  /** The callbacks that arrived at a path, parsed; each checked for its certificate and signature. */
  const arrived = (path: string) =>
    callbacks.received
      .filter((r) => r.path === path)
      .map((r) => {
        assert.equal(r.client, clientFingerprint, 'presented the configured client certificate');
        new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
        return JSON.parse(r.body) as Json;
      });
  /** How many changes a callback's item tells: its own and its attempts' histories only grow. */
  const changes = (c: Json) =>
    ((c.atualizacao as Json[] | undefined)?.length ?? 0) + ((c.tentativas as Json[] | undefined) ?? []).reduce((n, a) => n + ((a.atualizacao as Json[] | undefined)?.length ?? 0), 0);
  const charge = async (txid: string) => {
    const res = await v2('GET', `/cobr/${txid}`);
    assert.equal(res.status, 200, res.text);
    assertBcbAnswer('GET /cobr/{txid}', { statusCode: res.status, headers: res.headers, body: res.text });
    return res.body;
  };
  const advance = async (body: Json) => {
    const res = await admin('/sandbox/clock/advance', body);
    assert.equal(res.status, 200, res.text);
    return res.body;
  };

  before(async () => {
    const client = await issueCertificate({ commonName: 'pix-api callbacks' });
    writeFileSync(join(dir, 'client.crt'), client.certPem);
    writeFileSync(join(dir, 'client.key'), client.keyPem);
    clientFingerprint = new X509Certificate(client.certPem).fingerprint256;
    callbacks = await mutualTlsReceiver(dir);
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    // The API trusts the receiver too: a resend is delivered by the API process itself.
    t = await startTestApp({
      env: {
        PUBLIC_URL: origin,
        WEBHOOK_CLIENT_CERT_FILE: join(dir, 'client.crt'),
        WEBHOOK_CLIENT_KEY_FILE: join(dir, 'client.key'),
        WEBHOOK_CA_FILE: callbacks.caFile,
        WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    sender = new WebhookSender({ allowPrivate: true, caFile: callbacks.caFile, timeoutMs: 3000, clientCertificate: webhookClientCertificate(t.config) });
    receiver = await createClient(t, { name: 'Academia Forte', document: randomCnpj() });
    headers = receiver.headers;
    secret = ((await call('GET', '/api/webhooks/signing-secret')).body as { secret: string }).secret;
  });
  after(async () => {
    await sender?.close();
    await callbacks?.close();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('registers webhookrec and webhookcobr at the receiver (mutual TLS), readable back', async () => {
    for (const kind of ['rec', 'cobr']) {
      assert.equal((await v2('PUT', `/webhook${kind}`, { webhookUrl: `${callbacks.origin}/auto/` })).status, 200);
      const read = await v2('GET', `/webhook${kind}`);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.webhookUrl, `${callbacks.origin}/auto/`);
    }
  });

  it("journey 3: the first month's cob and the recurrence in one composite code; the sandbox payer pays it and approves the recurrence", async () => {
    const key = await evpKey(t, receiver.accountId);
    const first = `e2ecob${randomBytes(13).toString('hex')}`;
    assert.equal((await v2('PUT', `/cob/${first}`, { calendario: { expiracao: 3600 }, valor: { original: '89.90' }, chave: key })).status, 201);
    const loc = await v2('POST', '/locrec', { tipo: 'rec' });
    const made = await v2('POST', '/rec', {
      vinculo: { objeto: 'Plano Ouro', contrato: 'CTR-OURO-1', devedor: { cpf: randomCpf(), nome: 'Maria Pagadora' } },
      calendario: { dataInicial: today(), periodicidade: 'MENSAL' },
      valor: { valorRec: '89.90' },
      politicaRetentativa: 'PERMITE_3R_7D',
      loc: loc.body.id,
      ativacao: { dadosJornada: { txid: first } },
    });
    assert.equal(made.status, 201, made.text);
    idRec = String(made.body.idRec);
    const withCode = await v2('GET', `/rec/${idRec}?txid=${first}`);
    const code = withCode.body.dadosQR as Json;
    assert.equal(code.jornada, 'JORNADA_3');
    const paid = await admin('/sandbox/payer/pay', { pixCopiaECola: code.pixCopiaECola, payer: { name: 'Maria Pagadora', document: randomCpf() } });
    assert.equal(paid.status, 201, paid.text);
    assert.deepEqual(paid.body.recurrence, { idRec, status: 'APROVADA', tipoJornada: 'JORNADA_3' });
    assert.equal((await v2('GET', `/cob/${first}`)).body.status, 'CONCLUIDA');
    await deliver();
    const [notice] = arrived('/auto/rec');
    assert.ok(notice, 'the recurrence callback arrived');
    const rec = (notice.recs as Json[])[0]!;
    assertBcbDefinition('RecNotification', rec);
    assert.equal(rec.idRec, idRec);
    assert.equal(rec.status, 'APROVADA');
    assert.deepEqual(rec.ativacao, { tipoJornada: 'JORNADA_3', dadosJornada: { txid: first } });
  });

  it('three monthly cycles: each charge sent in its window, scheduled, and paid in the morning of its day', async () => {
    for (let month = 0; month < 3; month++) {
      // The day five days before this cycle's due date, at 10:00: within the window.
      const dueDay = month === 0 ? addDays(today(), 5) : addDays(cycles.at(-1)!.due, 30);
      if (month > 0) await advance({ to: at(addDays(dueDay, -5), '10:00') });
      const txid = `e2ecobr${month}${randomBytes(12).toString('hex')}`;
      const created = await v2('PUT', `/cobr/${txid}`, {
        idRec,
        calendario: { dataDeVencimento: dueDay },
        valor: { original: '89.90' },
        ajusteDiaUtil: false,
        recebedor: { conta: receiver.accountNumber, tipoConta: 'CORRENTE' },
      });
      assert.equal(created.status, 201, created.text);
      cycles.push({ txid, due: dueDay });
      if (month === 1) {
        // The second month the payer has no funds, in the morning and in the evening.
        assert.equal((await admin('/sandbox/faults', { kind: 'automatico', effect: 'reject', stage: 'attempt', reason: 'AM04', count: 2 })).status, 201);
      }
      assert.equal(((await advance({ to: 'next-event' })).event as Json).kind, 'charge-answered');
      assert.equal((await charge(txid)).status, 'ATIVA');
      const slot = await advance({ to: 'next-event' });
      assert.equal((slot.event as Json).kind, 'settlement-slot');
      assert.equal((slot.event as Json).at, at(dueDay, '00:00'));
      if (month !== 1) assert.equal((await charge(txid)).status, 'CONCLUIDA');
      else {
        assert.equal(((await advance({ to: 'next-event' })).event as Json).kind, 'intraday-retry');
        const failed = await charge(txid);
        assert.equal(failed.status, 'ATIVA', 'it waits for the receiver to retry');
        assert.deepEqual((failed.tentativas as Json[]).map((a) => [a.tipo, a.status]), [['AGND', 'EXPIRADA']]);
        const retried = await v2('POST', `/cobr/${txid}/retentativa/${addDays(dueDay, 2)}`);
        assert.equal(retried.status, 201, retried.text);
        assertBcbAnswer('POST /cobr/{txid}/retentativa/{data}', { statusCode: retried.status, headers: retried.headers, body: retried.text });
        await advance({ to: at(addDays(dueDay, 2), '00:00') });
        const paidLate = await charge(txid);
        assert.equal(paidLate.status, 'CONCLUIDA');
        assert.deepEqual((paidLate.tentativas as Json[]).map((a) => [a.tipo, a.status]), [['AGND', 'EXPIRADA'], ['NTAG', 'PAGA']]);
      }
    }
    const balance = await call('GET', '/balance');
    assert.equal(balance.body.netBalance, 359.6, 'the cob and three cycles: 4 x 89.90');
  });

  it('each change of the charges was told at POST {webhookUrl}/cobr, valid under CobRNotification, the last of each CONCLUIDA with its Pix', async () => {
    await deliver();
    // Callbacks are delivered concurrently, so they may arrive out of order: each is put in its
    // place by how many changes it tells (its own and its attempts' histories only grow).
    const told = arrived('/auto/cobr')
      .flatMap((b) => b.cobsr as Json[])
      .sort((a, b) => changes(a) - changes(b));
    for (const item of told) assertBcbDefinition('CobRNotification', item);
    assert.ok(told.every((c) => changes(c) > 0), 'every callback tells its history');
    for (const { txid } of cycles) {
      const mine = told.filter((c) => c.txid === txid);
      assert.ok(mine.length >= 2, `${txid}: scheduled and paid at least`);
      const last = mine.at(-1)!;
      assert.equal(last.status, 'CONCLUIDA');
      const pix = (last.pix as Json[])[0]!;
      assert.equal(pix.txid, txid);
      assert.equal(pix.valor, '89.90');
    }
    const second = told.filter((c) => c.txid === cycles[1]!.txid).map((c) => (c.tentativas as Json[]).map((a) => `${String(a.tipo)}:${String(a.status)}`).join(','));
    assert.deepEqual([...new Set(second)], ['AGND:AGENDADA', 'AGND:EXPIRADA', 'AGND:EXPIRADA,NTAG:SOLICITADA', 'AGND:EXPIRADA,NTAG:AGENDADA', 'AGND:EXPIRADA,NTAG:PAGA']);
  });

  it('POST /api/resend-webhook/{idRec | txid} resends the latest callback of the recurrence or the charge: same body and webhook-id, over mutual TLS, logged as a resend', async () => {
    await deliver();
    // The latest callback about a subject: the one that tells the most changes.
    const item = (path: string, body: string) => ((JSON.parse(body) as Json)[path.endsWith('/rec') ? 'recs' : 'cobsr'] as Json[])[0]!;
    const latest = (path: string, field: 'idRec' | 'txid', id: string) =>
      callbacks.received
        .filter((r) => r.path === path && item(path, r.body)[field] === id)
        .sort((a, b) => changes(item(path, a.body)) - changes(item(path, b.body)))
        .at(-1)!;
    const last = cycles.at(-1)!.txid;
    const cases = [
      [idRec, '/auto/rec', latest('/auto/rec', 'idRec', idRec)],
      [last, '/auto/cobr', latest('/auto/cobr', 'txid', last)],
    ] as const;
    for (const [identifier, path, sent] of cases) {
      assert.ok(sent, `a callback about ${identifier} was delivered`);
      callbacks.received.length = 0;
      const res = await call('POST', `/api/resend-webhook/${identifier}`);
      assert.equal(res.status, 200, res.text);
      const body = res.body as { webhookId: string; statusCode: number; deliveries: { url: string; success: boolean }[]; webhookLogId: number };
      assert.deepEqual(
        [body.webhookId, body.statusCode, body.deliveries.map((d) => [d.url, d.success])],
        [sent.headers['webhook-id'], 200, [[`${callbacks.origin}${path}`, true]]],
      );
      const [got] = callbacks.received;
      assert.equal(got!.path, path);
      assert.equal(got!.body, sent.body, 'the same body');
      assert.equal(got!.headers['webhook-id'], sent.headers['webhook-id']);
      arrived(path);
      const logs = await call('GET', `/api/webhooks/logs?eventType=${path.slice(6)}&size=100`);
      assert.equal(logs.status, 200, logs.text);
      const entry = (logs.body.data as Json[]).find((l) => l.webhookLogId === body.webhookLogId);
      assert.deepEqual([entry?.eventType, entry?.isResend, entry?.success], [path.slice(6), true, true]);
    }
    const unknown = await call('POST', '/api/resend-webhook/RN9999999920261207000000000000');
    assert.equal(unknown.status, 404, unknown.text);
  });
});
