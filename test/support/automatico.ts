/**
 * Pix Automático in tests: a receiver's recurrences approved by the sandbox's payer PSP, recurring
 * charges, and the test clock moved to the moments the network acts, each through the API as an
 * integrator (or the sandbox) calls it.
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { randomCpf, type TestClient } from '../factories.ts';
import { adminHeaders, type TestApp } from '../harness.ts';
import { randomAlphanumeric } from '../../src/lib/ids.ts';
import { SANDBOX_PAYER_ISPB } from '../../src/modules/sandbox/service.ts';
import { addDays } from '../../src/modules/recurrences/cycle.ts';
import { saoPauloDay } from '../../src/modules/cobv/due.ts';

export type Json = Record<string, unknown>;

export class Automatico {
  readonly t: TestApp;
  readonly a: TestClient;
  constructor(t: TestApp, a: TestClient) {
    this.t = t;
    this.a = a;
  }

  /** Business time's day in São Paulo, `n` days from today. */
  day(n = 0): string {
    return addDays(saoPauloDay(this.t.controls!.clock.now()), n);
  }

  req(method: 'POST' | 'GET' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown, client: TestClient = this.a): Promise<LightMyRequestResponse> {
    return this.t.app.inject({ method, url, headers: client.headers, ...(body === undefined ? {} : { payload: body as Json }) });
  }

  admin(method: 'POST' | 'GET' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> {
    return this.t.app.inject({ method, url, headers: adminHeaders, ...(body === undefined ? {} : { payload: body as Json }) });
  }

  /** A recurrence's request: monthly from `dataInicial`, R$ 49.90 fixed, to a new devedor. */
  recBody(extra: Json = {}, cpf = randomCpf()): Json {
    return {
      vinculo: { objeto: 'Plano mensal', contrato: `C${randomAlphanumeric(8)}`, devedor: { cpf, nome: 'Fulano de Tal' } },
      calendario: { dataInicial: this.day(0), periodicidade: 'MENSAL' },
      valor: { valorRec: '49.90' },
      politicaRetentativa: 'PERMITE_3R_7D',
      ...extra,
    };
  }

  async newRec(extra: Json = {}, client: TestClient = this.a): Promise<Json> {
    const res = await this.req('POST', '/v2/rec', this.recBody(extra), client);
    assert.equal(res.statusCode, 201, res.body);
    return res.json<Json>();
  }

  async getRec(idRec: string, client: TestClient = this.a): Promise<Json> {
    const res = await this.req('GET', `/v2/rec/${idRec}`, undefined, client);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Json>();
  }

  /** A solicitation of the recurrence to its devedor at the sandbox's payer PSP. */
  async solicit(rec: Json, extra: Json = {}, client: TestClient = this.a): Promise<Json> {
    const devedor = (rec.vinculo as { devedor: Json }).devedor;
    const res = await this.req(
      'POST',
      '/v2/solicrec',
      {
        idRec: rec.idRec,
        calendario: { dataExpiracaoSolicitacao: new Date(this.t.controls!.clock.now().getTime() + 7 * 86_400_000).toISOString() },
        destinatario: { agencia: '0001', conta: '123456', ispbParticipante: SANDBOX_PAYER_ISPB, cpf: devedor.cpf },
        ...extra,
      },
      client,
    );
    assert.equal(res.statusCode, 201, res.body);
    return res.json<Json>();
  }

  /** Moves the test clock: by seconds, to a time, or to the next event (whose kind is checked when given). */
  async advance(body: { seconds?: number; to?: string }, expectKind?: string): Promise<Json> {
    const res = await this.admin('POST', '/sandbox/clock/advance', body);
    assert.equal(res.statusCode, 200, res.body);
    const view = res.json<Json>();
    if (expectKind !== undefined) assert.equal((view.event as Json | undefined)?.kind, expectKind, res.body);
    return view;
  }

  next(expectKind?: string): Promise<Json> {
    return this.advance({ to: 'next-event' }, expectKind);
  }

  /** A recurrence approved by journey 1: solicited, then the network's three steps (sent, received, answered). */
  async approvedRec(extra: Json = {}, client: TestClient = this.a): Promise<Json> {
    const rec = await this.newRec(extra, client);
    await this.solicit(rec, {}, client);
    await this.advance({ seconds: 61 * 3 });
    const approved = await this.getRec(String(rec.idRec), client);
    assert.equal(approved.status, 'APROVADA', JSON.stringify(approved));
    return approved;
  }

  cobrBody(rec: Json, due: string, extra: Json = {}, client: TestClient = this.a): Json {
    return {
      idRec: rec.idRec,
      calendario: { dataDeVencimento: due },
      valor: { original: ((rec.valor as Json | undefined)?.valorRec as string | undefined) ?? '49.90' },
      ajusteDiaUtil: false,
      recebedor: { agencia: client.branch, conta: client.accountNumber, tipoConta: 'CORRENTE' },
      ...extra,
    };
  }

  async newCobr(rec: Json, due: string, extra: Json = {}, client: TestClient = this.a): Promise<Json> {
    const res = await this.req('PUT', `/v2/cobr/${randomAlphanumeric(32)}`, this.cobrBody(rec, due, extra, client), client);
    assert.equal(res.statusCode, 201, res.body);
    return res.json<Json>();
  }

  async getCobr(txid: string, client: TestClient = this.a): Promise<Json> {
    const res = await this.req('GET', `/v2/cobr/${txid}`, undefined, client);
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Json>();
  }

  async fault(body: Json): Promise<Json> {
    const res = await this.admin('POST', '/sandbox/faults', { kind: 'automatico', ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<Json>();
  }

  /** The statuses of a charge's attempts, in order: `[tipo, status]`. */
  static attempts(cobr: Json): [string, string][] {
    return ((cobr.tentativas as Json[] | undefined) ?? []).map((a) => [String(a.tipo), String(a.status)]);
  }
}
