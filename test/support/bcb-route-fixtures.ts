/**
 * What the shared cases of test/support/bcb-route-cases.ts need of each /v2 operation, by
 * operationId: the owner's request (changes to the operation's example in openapi.json) and
 * another account's resource. An operation missing from this table fails its test.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestClient } from '../factories.ts';
import { evpKey, operator, randomCpf } from '../factories.ts';
import { adminHeaders, type TestApp } from '../harness.ts';
import { saoPauloDay } from '../../src/modules/cobv/due.ts';
import { addDays } from '../../src/modules/recurrences/cycle.ts';
import { SANDBOX_PAYER_ISPB } from '../../src/modules/sandbox/service.ts';
import type { BcbRouteFixture } from './bcb-route-cases.ts';

/** Account A's resources, made once through /v2 before the cases run. */
export interface BcbOwned {
  /** A's account number, which its recurring charges name. */
  account: { accountNumber: string };
  key: string;
  /** A's cob, read by the cases. */
  cob: string;
  /** A's cob the PATCH case revises. */
  patched: string;
  cobv: string;
  /** A's batch of cobv. */
  batch: string;
  /** A location linked to `cob`; and one the DELETE case unlinks. */
  loc: number;
  unlinked: number;
  /** A location of recurrences. */
  locrec: number;
  /** A's recurrence, CRIADA, read and revised by the cases. */
  rec: string;
  /** A's recurrence approved by its payer (journey 1), and its solicitation (ACEITA); a solicitation still under way. */
  approved: string;
  solicitation: string;
  pendingSolicitation: string;
  /** An approved recurrence without charges, and the due dates the PUT and POST cases charge it for (a cycle each). */
  free: string;
  putDue: string;
  postDue: string;
  /** A's recurring charges: one read, one the PATCH case cancels, one whose attempt was refused (retried by the cases on `retry`). */
  cobr: string;
  cobrCancelled: string;
  cobrRefused: string;
  retry: string;
  /** A Pix A received with a txid, refunded in part (`refund`). */
  e2eid: string;
  refund: string;
  /** The interval the resources were made in, for the lists. */
  inicio: string;
  fim: string;
}

const fresh = (prefix: string, length = 32) => `${prefix}${randomBytes(24).toString('hex')}`.slice(0, length);
const dayFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
const DEVEDOR = { cpf: '12345678909', nome: 'Francisco da Silva', logradouro: 'Alameda Souza, 80', cidade: 'Recife', uf: 'PE', cep: '70011750' };

const cobBody = (o: BcbOwned) => ({ calendario: { expiracao: 3600 }, valor: { original: '37.00' }, chave: o.key });
const cobvBody = (o: BcbOwned) => ({ calendario: { dataDeVencimento: dayFromNow(20) }, devedor: DEVEDOR, valor: { original: '100.00' }, chave: o.key });
const interval = (o: BcbOwned) => ({ inicio: o.inicio, fim: o.fim });

/** Makes A's resources through the API, as an integrator would. */
export async function makeBcbOwned(t: TestApp, a: TestClient): Promise<BcbOwned> {
  const inicio = new Date(t.clock.now().getTime() - 60_000).toISOString();
  const send = async (method: 'PUT' | 'POST' | 'PATCH', url: string, payload: object, status: number) => {
    const res = await t.app.inject({ method, url: `/v2${url}`, headers: a.headers, payload });
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    return (res.body === '' ? {} : res.json()) as Record<string, unknown>;
  };
  const key = await evpKey(t, a.accountId);
  const partial = { key } as BcbOwned;
  const [cob, patched, cobv, batch, linkedTxid] = [fresh('cob'), fresh('patch'), fresh('cobv'), String(1 + (randomBytes(4).readUInt32BE() % 1e9)), fresh('loc')];
  const made = await send('PUT', `/cob/${cob}`, cobBody(partial), 201);
  await send('PUT', `/cob/${patched}`, cobBody(partial), 201);
  await send('PUT', `/cobv/${cobv}`, cobvBody(partial), 201);
  await send('PUT', `/lotecobv/${batch}`, { descricao: 'Lote', cobsv: [{ ...cobvBody(partial), txid: fresh('lote') }] }, 202);
  const unlinked = (await send('PUT', `/cob/${linkedTxid}`, cobBody(partial), 201)).loc as { id: number };
  const paid = await operator(t).incomingPix({ pixKey: key, amount: '37.00', txid: cob, payer: { name: 'Pagador', document: randomCpf() } });
  const refund = fresh('dev', 20);
  await send('PUT', `/pix/${paid.endToEndId}/devolucao/${refund}`, { valor: '1.00' }, 201);
  await send('PUT', `/webhook/${key}`, { webhookUrl: 'https://127.0.0.1:8443/bcb' }, 200);
  const locrec = (await send('POST', '/locrec', { tipo: 'rec' }, 201)).id as number;
  const rec = (await send('POST', '/rec', recBody(inicio), 201)).idRec as string;
  const automatico = await makeAutomatico(t, a, send);
  await send('PUT', '/webhookrec', { webhookUrl: 'https://127.0.0.1:8443/rec' }, 200);
  await send('PUT', '/webhookcobr', { webhookUrl: 'https://127.0.0.1:8443/cobr' }, 200);
  return {
    ...automatico,
    account: { accountNumber: a.accountNumber },
    locrec,
    rec,
    key,
    cob,
    patched,
    cobv,
    batch,
    loc: (made.loc as { id: number }).id,
    unlinked: unlinked.id,
    e2eid: paid.endToEndId,
    refund,
    inicio,
    fim: new Date(t.clock.now().getTime() + 60_000).toISOString(),
  };
}

type Send = (method: 'PUT' | 'POST' | 'PATCH', url: string, payload: object, status: number) => Promise<Record<string, unknown>>;

/**
 * A's Pix Automático: recurrences approved by the sandbox's payer (solicitations, then the
 * network's steps on the test clock), each weekly from today; recurring charges of them in their
 * window: one read, one the PATCH case cancels, one the payer's PSP refused (AM02: that attempt
 * only), and a recurrence left free for the PUT and POST cases (a cycle each). Then a
 * solicitation still under way, for the PATCH case to cancel.
 */
async function makeAutomatico(t: TestApp, a: TestClient, send: Send) {
  const today = saoPauloDay(t.controls!.clock.now());
  const advance = async (seconds: number) => {
    const res = await t.app.inject({ method: 'POST', url: '/sandbox/clock/advance', headers: adminHeaders, payload: { seconds } });
    assert.equal(res.statusCode, 200, res.body);
  };
  const solicited = async () => {
    const body = { ...recBody(new Date(Date.parse(`${today}T12:00:00Z`) - 10 * 86_400_000).toISOString()), politicaRetentativa: 'PERMITE_3R_7D', calendario: { dataInicial: today, periodicidade: 'SEMANAL' } };
    const idRec = (await send('POST', '/rec', body, 201)).idRec as string;
    const destinatario = { conta: '123456', ispbParticipante: SANDBOX_PAYER_ISPB, cpf: body.vinculo.devedor.cpf };
    const expiry = new Date(t.controls!.clock.now().getTime() + 86_400_000).toISOString();
    const solicitation = (await send('POST', '/solicrec', { idRec, calendario: { dataExpiracaoSolicitacao: expiry }, destinatario }, 201)).idSolicRec as string;
    return { idRec, solicitation };
  };
  const recs = [await solicited(), await solicited(), await solicited(), await solicited()];
  await advance(200);
  const [read, cancelled, refused, free] = recs.map((r) => r.idRec) as [string, string, string, string];
  const [cobr, cobrCancelled, cobrRefused] = [fresh('cobr'), fresh('cobrx'), fresh('cobry')];
  const due = addDays(today, 9);
  await send('PUT', `/cobr/${cobr}`, cobrBody(a, read, addDays(today, 2)), 201);
  await send('PUT', `/cobr/${cobrCancelled}`, cobrBody(a, cancelled, addDays(today, 3)), 201);
  await advance(61);
  const fault = await t.app.inject({ method: 'POST', url: '/sandbox/faults', headers: adminHeaders, payload: { kind: 'automatico', effect: 'reject', stage: 'scheduling', reason: 'AM02', count: 1 } });
  assert.equal(fault.statusCode, 201, fault.body);
  await send('PUT', `/cobr/${cobrRefused}`, cobrBody(a, refused, due), 201);
  await advance(61);
  const pending = await solicited();
  return {
    approved: read,
    solicitation: recs[0]!.solicitation,
    pendingSolicitation: pending.solicitation,
    free,
    putDue: addDays(today, 2),
    postDue: addDays(today, 8),
    cobr,
    cobrCancelled,
    cobrRefused,
    retry: addDays(due, 1),
  };
}

/** A recurring charge of R$ 35.00 of A's recurrence, due on `due`. */
function cobrBody(a: Pick<TestClient, 'accountNumber'>, idRec: string, due: string) {
  return { idRec, calendario: { dataDeVencimento: due }, valor: { original: '35.00' }, ajusteDiaUtil: false, recebedor: { conta: a.accountNumber, tipoConta: 'CORRENTE' } };
}

/** A monthly recurrence of R$ 35.00 starting ten days after `from` (an RFC 3339 instant of the test clock). */
function recBody(from: string) {
  const start = new Date(Date.parse(from) + 10 * 86_400_000).toISOString().slice(0, 10);
  return {
    vinculo: { objeto: 'Assinatura mensal', contrato: `C${randomBytes(4).toString('hex')}`, devedor: { cpf: randomCpf(), nome: 'Fulano de Tal' } },
    calendario: { dataInicial: start, periodicidade: 'MENSAL' },
    valor: { valorRec: '35.00' },
    politicaRetentativa: 'NAO_PERMITE',
  };
}

const NONE_LIST = { none: "a list shows the caller's own resources only" };

export const BCB_ROUTE_FIXTURES: Record<string, BcbRouteFixture<BcbOwned>> = {
  bcbPutCob: { own: (o) => ({ params: { txid: fresh('put') }, body: cobBody(o) }), foreign: { none: "a txid is the account's own: another account's PUT creates its own charge" } },
  bcbPostCob: { own: (o) => ({ body: cobBody(o) }), foreign: { none: 'creates a charge with a new txid' } },
  bcbGetCob: { own: (o) => ({ params: { txid: o.cob, revisao: undefined } }), foreign: { request: (o) => ({ params: { txid: o.cob, revisao: undefined } }), problem: 'CobNaoEncontrado' } },
  bcbPatchCob: { own: (o) => ({ params: { txid: o.patched } }), foreign: { request: (o) => ({ params: { txid: o.patched } }), problem: 'CobNaoEncontrado' } },
  bcbListCob: { own: (o) => ({ params: interval(o) }), foreign: NONE_LIST },

  bcbPutCobv: { own: (o) => ({ params: { txid: fresh('putv') }, body: cobvBody(o) }), foreign: { none: "a txid is the account's own: another account's PUT creates its own charge" } },
  bcbGetCobv: { own: (o) => ({ params: { txid: o.cobv, revisao: undefined } }), foreign: { request: (o) => ({ params: { txid: o.cobv, revisao: undefined } }), problem: 'CobVNaoEncontrada' } },
  bcbPatchCobv: { own: (o) => ({ params: { txid: o.cobv } }), foreign: { request: (o) => ({ params: { txid: o.cobv } }), problem: 'CobVNaoEncontrada' } },
  bcbListCobv: { own: (o) => ({ params: { ...interval(o), cpf: undefined, status: undefined } }), foreign: NONE_LIST },

  bcbPutLoteCobv: {
    own: (o) => ({ params: { id: String(1 + (randomBytes(4).readUInt32BE() % 1e9)) }, body: { descricao: 'Lote', cobsv: [{ ...cobvBody(o), txid: fresh('lote') }] } }),
    foreign: { none: "a batch id is the account's own: another account's PUT creates its own batch" },
  },
  bcbPatchLoteCobv: {
    own: (o) => ({ params: { id: o.batch }, body: { cobsv: [] } }),
    foreign: { request: (o) => ({ params: { id: o.batch }, body: { cobsv: [] } }), problem: 'LoteCobVNaoEncontrado' },
  },
  bcbGetLoteCobv: { own: (o) => ({ params: { id: o.batch } }), foreign: { request: (o) => ({ params: { id: o.batch } }), problem: 'LoteCobVNaoEncontrado' } },
  bcbListLoteCobv: { own: (o) => ({ params: interval(o) }), foreign: NONE_LIST },

  bcbPostLoc: { own: () => ({}), foreign: { none: 'creates a location' } },
  bcbListLoc: { own: (o) => ({ params: interval(o) }), foreign: NONE_LIST },
  bcbGetLoc: { own: (o) => ({ params: { id: o.loc } }), foreign: { request: (o) => ({ params: { id: o.loc } }), problem: 'PayloadLocationNaoEncontrado' } },
  bcbDeleteLocTxid: { own: (o) => ({ params: { id: o.unlinked } }), foreign: { request: (o) => ({ params: { id: o.unlinked } }), problem: 'PayloadLocationNaoEncontrado' } },
  bcbGetLocQrcode: { own: (o) => ({ params: { id: o.loc } }), foreign: { request: (o) => ({ params: { id: o.loc } }), problem: 'PayloadLocationNaoEncontrado' } },

  bcbPostLocRec: { own: () => ({ body: { tipo: 'rec' } }), foreign: { none: 'creates a location' } },
  bcbListLocRec: { own: (o) => ({ params: interval(o) }), foreign: NONE_LIST },
  bcbGetLocRec: { own: (o) => ({ params: { id: o.locrec } }), foreign: { request: (o) => ({ params: { id: o.locrec } }), problem: 'PayloadLocationRecNaoEncontrado' } },
  bcbDeleteLocRecIdRec: { own: (o) => ({ params: { id: o.locrec } }), foreign: { request: (o) => ({ params: { id: o.locrec } }), problem: 'PayloadLocationRecNaoEncontrado' } },

  bcbPostRec: { own: (o) => ({ body: recBody(o.inicio) }), foreign: { none: 'creates a recurrence of its own' } },
  bcbListRec: { own: (o) => ({ params: interval(o) }), foreign: NONE_LIST },
  bcbGetRec: { own: (o) => ({ params: { idRec: o.rec, txid: undefined } }), foreign: { request: (o) => ({ params: { idRec: o.rec, txid: undefined } }), problem: 'RecNaoEncontrada' } },
  bcbPatchRec: {
    own: (o) => ({ params: { idRec: o.rec }, body: { vinculo: { devedor: { nome: 'Fulano de Tal' } } } }),
    foreign: { request: (o) => ({ params: { idRec: o.rec }, body: { vinculo: { devedor: { nome: 'Fulano de Tal' } } } }), problem: 'RecNaoEncontrada' },
  },

  bcbPostSolicRec: {
    own: (o) => ({ body: { idRec: o.rec, calendario: { dataExpiracaoSolicitacao: new Date(Date.parse(o.fim) + 86_400_000).toISOString() }, destinatario: { conta: '1', ispbParticipante: SANDBOX_PAYER_ISPB, cpf: randomCpf() } } }),
    foreign: { none: "another account's recurrence is refused as invalid (400 SolicRecOperacaoInvalida): idRec is a field of the body" },
  },
  bcbGetSolicRec: { own: (o) => ({ params: { idSolicRec: o.solicitation } }), foreign: { request: (o) => ({ params: { idSolicRec: o.solicitation } }), problem: 'SolicRecNaoEncontrada' } },
  bcbPatchSolicRec: {
    own: (o) => ({ params: { idSolicRec: o.pendingSolicitation } }),
    foreign: { request: (o) => ({ params: { idSolicRec: o.solicitation } }), problem: 'SolicRecNaoEncontrada' },
  },

  bcbPutCobR: {
    own: (o) => ({ params: { txid: fresh('putr') }, body: cobrBody(o.account, o.free, o.putDue) }),
    foreign: { none: "a txid is the account's own; another account's recurrence is refused as invalid (400 CobROperacaoInvalida)" },
  },
  bcbPostCobR: { own: (o) => ({ body: cobrBody(o.account, o.free, o.postDue) }), foreign: { none: 'creates a charge with a new txid' } },
  bcbGetCobR: { own: (o) => ({ params: { txid: o.cobr } }), foreign: { request: (o) => ({ params: { txid: o.cobr } }), problem: 'CobRNaoEncontrado' } },
  bcbPatchCobR: { own: (o) => ({ params: { txid: o.cobrCancelled } }), foreign: { request: (o) => ({ params: { txid: o.cobr } }), problem: 'CobRNaoEncontrado' } },
  bcbListCobR: { own: (o) => ({ params: { ...interval(o), idRec: o.approved } }), foreign: NONE_LIST },
  bcbPostCobRRetentativa: {
    own: (o) => ({ params: { txid: o.cobrRefused, data: o.retry } }),
    foreign: { request: (o) => ({ params: { txid: o.cobrRefused, data: o.retry } }), problem: 'CobRNaoEncontrado' },
  },

  bcbPutWebhookRec: { own: () => ({ body: { webhookUrl: 'https://127.0.0.1:8443/rec' } }), foreign: { none: "the webhook of recurrences is the caller's own" } },
  bcbGetWebhookRec: { own: () => ({}), foreign: { none: "the webhook of recurrences is the caller's own" } },
  bcbDeleteWebhookRec: { own: () => ({}), foreign: { none: "the webhook of recurrences is the caller's own" } },
  bcbPutWebhookCobR: { own: () => ({ body: { webhookUrl: 'https://127.0.0.1:8443/cobr' } }), foreign: { none: "the webhook of recurring charges is the caller's own" } },
  bcbGetWebhookCobR: { own: () => ({}), foreign: { none: "the webhook of recurring charges is the caller's own" } },
  bcbDeleteWebhookCobR: { own: () => ({}), foreign: { none: "the webhook of recurring charges is the caller's own" } },

  bcbListPix: { own: (o) => ({ params: interval(o) }), foreign: NONE_LIST },
  bcbGetPix: { own: (o) => ({ params: { e2eid: o.e2eid } }), foreign: { request: (o) => ({ params: { e2eid: o.e2eid } }), problem: 'PixNaoEncontrado' } },
  bcbRequestDevolucao: {
    own: (o) => ({ params: { e2eid: o.e2eid, id: fresh('dev', 20) }, body: { valor: '1.00' } }),
    foreign: { request: (o) => ({ params: { e2eid: o.e2eid, id: fresh('dev', 20) }, body: { valor: '1.00' } }), problem: 'PixNaoEncontrado' },
  },
  bcbGetDevolucao: {
    own: (o) => ({ params: { e2eid: o.e2eid, id: o.refund } }),
    foreign: { request: (o) => ({ params: { e2eid: o.e2eid, id: o.refund } }), problem: 'PixDevolucaoNaoEncontrada' },
  },

  bcbPutWebhook: {
    own: (o) => ({ params: { chave: o.key }, body: { webhookUrl: 'https://127.0.0.1:8443/bcb' } }),
    foreign: { none: "another account's key is refused as invalid (400 WebhookOperacaoInvalida), as BCB's PUT says" },
  },
  bcbGetWebhook: { own: (o) => ({ params: { chave: o.key } }), foreign: { request: (o) => ({ params: { chave: o.key } }), problem: 'WebhookNaoEncontrado' } },
  bcbDeleteWebhook: { own: (o) => ({ params: { chave: o.key } }), foreign: { request: (o) => ({ params: { chave: o.key } }), problem: 'WebhookNaoEncontrado' } },
  bcbListWebhooks: { own: () => ({ params: { inicio: undefined, fim: undefined } }), foreign: NONE_LIST },
};
