/**
 * An integration written for BCB's API Pix, unchanged: a PSP's own published SDK (Efí Bank's
 * `sdk-node-apis-efi`, which speaks BCB's /v2 routes) is pointed at this service by its base URL
 * and given this service's credentials and client certificate, and nothing else. It takes its
 * OAuth token (JSON body, HTTP Basic, mutual TLS) and drives every group of BCB's operations; its
 * answers are checked against BCB's schemas.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import EfiPay from 'sdk-node-apis-efi';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { createClient, evpKey, operator, randomCpf, type TestClient } from './factories.ts';
import { adminHeaders, startTestApp, type TestApp } from './harness.ts';
import { freePort } from './processes.ts';
import { assertBcbDefinition } from './support/bcb-schemas.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The SDK's table of base URLs: the one thing an integrator changes is where it points. */
const endpointsModule = new URL('../node_modules/sdk-node-apis-efi/dist/esm/constants/endpoints.js', import.meta.url).href;

/** What the SDK throws for an error answer: the body (BCB's problem). */
async function problemOf(call: Promise<unknown>): Promise<Json> {
  try {
    await call;
  } catch (error) {
    return error as Json;
  }
  assert.fail('the call succeeded');
}

describe("a PSP's SDK for BCB's API Pix (sdk-node-apis-efi), with only its base URL and credentials changed", () => {
  const dir = mkdtempSync(join(tmpdir(), 'pix-sdk-'));
  let t: TestApp;
  let origin: string;
  let holder: TestClient;
  let chave: string;
  let efi: InstanceType<typeof EfiPay>;
  const txid = `sdk${randomBytes(14).toString('hex')}`;
  const txidV = `sdkv${randomBytes(14).toString('hex')}`;
  const today = () => t.clock.now();
  const window = () => ({ inicio: new Date(today().getTime() - 3_600_000).toISOString(), fim: new Date(today().getTime() + 3_600_000).toISOString() });

  before(async () => {
    // The service on HTTPS with a certificate of a test CA, which the SDK's process trusts.
    const ca = await issueCertificate({ commonName: 'Pix SDK Test CA', isCa: true });
    const server = await issueCertificate({ commonName: 'localhost', issuer: ca, dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'server.crt'), server.certPem);
    writeFileSync(join(dir, 'server.key'), server.keyPem, { mode: 0o600 });
    setDefaultCACertificates([...getCACertificates('default'), ca.certPem]);
    const port = await freePort();
    origin = `https://localhost:${port}`;
    t = await startTestApp({ env: { PUBLIC_URL: origin, TLS_CERT_FILE: join(dir, 'server.crt'), TLS_KEY_FILE: join(dir, 'server.key') } });
    await t.app.listen({ port, host: '127.0.0.1' });

    holder = await createClient(t, { name: 'Padaria do SDK' });
    chave = await evpKey(t, holder.accountId);
    writeFileSync(join(dir, 'client.crt'), holder.cert.certPem);
    writeFileSync(join(dir, 'client.key'), holder.cert.keyPem, { mode: 0o600 });

    const { endpoints } = (await import(endpointsModule)) as { endpoints: { APIS: Record<string, { URL: { SANDBOX: string } }> } };
    endpoints.APIS.PIX!.URL.SANDBOX = origin;
    efi = new EfiPay({
      sandbox: true,
      client_id: holder.clientId,
      client_secret: holder.clientSecret,
      certificate: join(dir, 'client.crt'),
      pemKey: join(dir, 'client.key'),
    });
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('cob: create (PUT and POST), revise, read a revision, list', async () => {
    const created = (await efi.pixCreateCharge(
      { txid },
      { calendario: { expiracao: 3600 }, devedor: { cpf: randomCpf(), nome: 'Maria Devedora' }, valor: { original: '12.34' }, chave, solicitacaoPagador: 'Pedido 1' },
    )) as Json;
    assertBcbDefinition('CobGerada', created);
    assert.equal(created.txid, txid);
    assert.equal(created.status, 'ATIVA');
    assert.equal(created.revisao, 0);
    assert.match(created.loc.location, /^localhost:\d+\/qr\/v2\/[A-Za-z0-9-]+$/);

    const posted = (await efi.pixCreateImmediateCharge({}, { calendario: { expiracao: 600 }, valor: { original: '1.00' }, chave })) as Json;
    assertBcbDefinition('CobGerada', posted);
    assert.match(posted.txid, /^[a-zA-Z0-9]{26,35}$/);

    const revised = (await efi.pixUpdateCharge({ txid }, { valor: { original: '15.00' } })) as Json;
    assert.equal(revised.revisao, 1);
    assert.equal(revised.valor.original, '15.00');
    const first = (await efi.pixDetailCharge({ txid, revisao: 0 })) as Json;
    assertBcbDefinition('CobCompleta', first);
    assert.equal(first.valor.original, '12.34');

    const listed = (await efi.pixListCharges(window())) as Json;
    assertBcbDefinition('CobsConsultadas', listed);
    assert.deepEqual(listed.cobs.map((c: Json) => c.txid).sort(), [txid, posted.txid].sort());
    const page = (await efi.pixListCharges({ ...window(), status: 'ATIVA', 'paginacao.itensPorPagina': 1, 'paginacao.paginaAtual': 1 })) as Json;
    assertBcbDefinition('CobsConsultadas', page);
    assert.equal(page.cobs.length, 1);
    assert.deepEqual(page.parametros.paginacao, { paginaAtual: 1, itensPorPagina: 1, quantidadeDePaginas: 2, quantidadeTotalDeItens: 2 });
  });

  it("a reader's library (pix-utils) decodes the BR Codes and fetches their payloads over HTTPS, the cobv's with DPP and codMun", async () => {
    const due = new Date(today().getTime() + 5 * 86_400_000).toISOString().slice(0, 10);
    const cobvTxid = `sdkreader${randomBytes(12).toString('hex')}`;
    const cobv = (await efi.pixCreateDueCharge(
      { txid: cobvTxid },
      { calendario: { dataDeVencimento: due }, devedor: { cpf: randomCpf(), nome: 'Leitor' }, valor: { original: '20.00', juros: { modalidade: 1, valorPerc: '1.00' } }, chave },
    )) as Json;
    const cob = (await efi.pixDetailCharge({ txid })) as Json;
    for (const [brCode, wanted] of [
      [cob.pixCopiaECola as string, txid],
      [cobv.pixCopiaECola as string, cobvTxid],
    ] as const) {
      const parsed = parsePix(brCode);
      assert.ok(!hasError(parsed) && isDynamicPix(parsed), brCode);
      const fetched = (await parsed.fetchPayload({ DPP: due, codMun: 5300108 })) as Json;
      assert.ok(!hasError(fetched as never), JSON.stringify(fetched));
      assert.equal(fetched.header.alg, 'PS256');
      assert.equal(fetched.payload.txid, wanted);
    }
  });

  it('a problem comes back as BCB writes it: a charge that does not exist is 404 with its type', async () => {
    const problem = await problemOf(efi.pixDetailCharge({ txid: `nada${randomBytes(13).toString('hex')}` }));
    assertBcbDefinition('Problema', problem);
    assert.equal(problem.status, 404);
    assert.equal(problem.type, 'https://pix.bcb.gov.br/api/v2/error/CobNaoEncontrado');
  });

  it('cobv and lotecobv: a due charge with fine and interest, a batch, their lists', async () => {
    const due = new Date(today().getTime() + 10 * 86_400_000).toISOString().slice(0, 10);
    const devedor = { cpf: randomCpf(), nome: 'Joao Devedor', logradouro: 'Rua A, 1', cidade: 'Brasilia', uf: 'DF', cep: '70000000' };
    const created = (await efi.pixCreateDueCharge(
      { txid: txidV },
      {
        calendario: { dataDeVencimento: due, validadeAposVencimento: 30 },
        devedor,
        valor: { original: '100.00', multa: { modalidade: 2, valorPerc: '2.00' }, juros: { modalidade: 2, valorPerc: '1.00' } },
        chave,
      },
    )) as Json;
    assertBcbDefinition('CobVGerada', created);
    assert.equal(created.calendario.dataDeVencimento, due);
    const revised = (await efi.pixUpdateDueCharge({ txid: txidV }, { valor: { original: '110.00' } })) as Json;
    assert.equal(revised.revisao, 1);
    const read = (await efi.pixDetailDueCharge({ txid: txidV })) as Json;
    assertBcbDefinition('CobVCompleta', read);
    assert.equal(read.valor.original, '110.00');
    const listed = (await efi.pixListDueCharges(window())) as Json;
    assertBcbDefinition('CobsVConsultadas', listed);
    assert.ok(listed.cobs.some((c: Json) => c.txid === txidV), JSON.stringify(listed.cobs.map((c: Json) => c.txid)));

    const batch = { descricao: 'Lote do SDK', cobsv: [1, 2].map((n) => ({ calendario: { dataDeVencimento: due }, txid: `sdklote${n}${randomBytes(12).toString('hex')}`, devedor, valor: { original: `${n}0.00` }, chave })) };
    await efi.pixCreateDueChargeBatch({ id: 4242 }, batch);
    const lote = (await efi.pixDetailDueChargeBatch({ id: 4242 })) as Json;
    assertBcbDefinition('LoteCobVConsultado', lote);
    assert.deepEqual(
      lote.cobsv.map((c: Json) => c.status),
      ['CRIADA', 'CRIADA'],
    );
    await efi.pixUpdateDueChargeBatch({ id: 4242 }, { cobsv: [{ txid: batch.cobsv[0]!.txid, valor: { original: '11.00' } }] });
    assert.equal(((await efi.pixDetailDueCharge({ txid: batch.cobsv[0]!.txid })) as Json).valor.original, '11.00');
    const lotes = (await efi.pixListDueChargeBatch(window())) as Json;
    assertBcbDefinition('LotesCobVConsultados', lotes);
    assert.equal(lotes.lotes.length, 1);
  });

  it('loc: create, read, its QR code, list, unlink the txid', async () => {
    const loc = (await efi.pixCreateLocation({}, { tipoCob: 'cob' })) as Json;
    assertBcbDefinition('PayloadLocation', loc);
    const read = (await efi.pixDetailLocation({ id: loc.id })) as Json;
    assertBcbDefinition('PayloadLocationCompleta', read);
    const charge = (await efi.pixCreateCharge({ txid: `sdkloc${randomBytes(12).toString('hex')}` }, { calendario: { expiracao: 600 }, valor: { original: '2.00' }, chave, loc: { id: loc.id } })) as Json;
    assert.equal(charge.loc.id, loc.id);
    const qr = (await efi.pixGenerateQRCode({ id: loc.id })) as Json;
    assert.equal(qr.qrcode, charge.pixCopiaECola);
    assert.match(qr.imagemQrcode, /^data:image\/png;base64,/);
    const listed = (await efi.pixLocationList(window())) as Json;
    assertBcbDefinition('PayloadLocationConsultadas', listed);
    assert.ok(listed.loc.some((l: Json) => l.id === loc.id));
    const unlinked = (await efi.pixUnlinkTxidLocation({ id: loc.id })) as Json;
    assert.equal(unlinked.txid, undefined);
  });

  it('webhook: configure the key, read it, list, delete', async () => {
    const webhookUrl = `${origin}/sandbox/inbox/sdk`;
    await efi.pixConfigWebhook({ chave }, { webhookUrl });
    const read = (await efi.pixDetailWebhook({ chave })) as Json;
    assertBcbDefinition('WebhookCompleto', read);
    assert.equal(read.webhookUrl, webhookUrl);
    const listed = (await efi.pixListWebhook(window())) as Json;
    assertBcbDefinition('WebhooksConsultados', listed);
    assert.equal(listed.webhooks.length, 1);
    await efi.pixDeleteWebhook({ chave });
    assert.equal((await problemOf(efi.pixDetailWebhook({ chave }))).status, 404);
  });

  it('pix: the charge paid, the Pix read and listed, a refund made and read', async () => {
    const charge = (await efi.pixDetailCharge({ txid })) as Json;
    const paid = await fetch(`${origin}/sandbox/payer/pay`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ pixCopiaECola: charge.pixCopiaECola, payer: { name: 'Ana Pagadora', document: randomCpf() } }),
    });
    const payment = (await paid.json()) as { endToEndId: string };
    assert.equal(paid.status, 201, JSON.stringify(payment));
    assert.equal(((await efi.pixDetailCharge({ txid })) as Json).status, 'CONCLUIDA');

    const pix = (await efi.pixDetailReceived({ e2eId: payment.endToEndId })) as Json;
    assertBcbDefinition('Pix', pix);
    assert.equal(pix.txid, txid);
    assert.equal(pix.valor, '15.00');
    const listed = (await efi.pixReceivedList(window())) as Json;
    assertBcbDefinition('PixConsultados', listed);
    assert.deepEqual(
      listed.pix.map((p: Json) => p.endToEndId),
      [payment.endToEndId],
    );

    const refund = (await efi.pixDevolution({ e2eId: payment.endToEndId, id: 'sdk1' }, { valor: '5.00' })) as Json;
    assertBcbDefinition('Devolucao', refund);
    assert.equal(refund.status, 'EM_PROCESSAMENTO');
    await operator(t).settle();
    const settled = (await efi.pixDetailDevolution({ e2eId: payment.endToEndId, id: 'sdk1' })) as Json;
    assert.equal(settled.status, 'DEVOLVIDO');
    const over = await problemOf(efi.pixDevolution({ e2eId: payment.endToEndId, id: 'sdk2' }, { valor: '10.01' }));
    assertBcbDefinition('Problema', over);
    assert.equal(over.status, 400);
  });
});
