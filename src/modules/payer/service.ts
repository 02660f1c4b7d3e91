import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { badRequest, unprocessable, type AppError } from '../../http/errors.ts';
import { BrCodeError, parseAnyBrCode, type AnyBrCode, type BrCode } from '../../lib/brcode.ts';
import { documentType, normalizeDocument } from '../../lib/document.ts';
import { pixIdentifier } from '../../lib/ids.ts';
import { formatCentavos, parseDecimal2 } from '../../lib/money.ts';
import { parsePixKey } from '../../lib/pix-key.ts';
import { findCharge, type ChargeRow } from '../charges/repo.ts';
import { effectiveStatus, expiresAt, payCharge } from '../charges/service.ts';
import { lastPayableDay } from '../cobv/amount.ts';
import { cobvDueOn, saoPauloDay } from '../cobv/due.ts';
import { findKey } from '../directory/repo.ts';
import { findLocationByToken } from '../locations/repo.ts';
import { findAuthority } from '../locations/signing/repo.ts';
import { receiveIncomingPix, SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB, type SandboxDeps } from '../sandbox/service.ts';
import { fetchText, FetchFailure, type PayerConnections } from './fetch.ts';
import { verifyPayloadJws } from './jws.ts';
import { amountPaid, payloadTerms, recPayloadTerms, type PayloadTerms, type TipoCob } from './payload.ts';
import { approveRecurrence } from '../recurrences/lifecycle.ts';
import { notApprovable, recurrenceAtLocation } from '../recurrences/service.ts';
import { pemChain } from '../locations/signing/files.ts';

/**
 * The sandbox payer: pays any BR Code the way a payer's institution does (docs/guide/payer.md).
 * A payment to a key or a location of this service is exactly an incoming Pix; one to another
 * institution's key is only simulated: nothing is credited here.
 */
export interface PayerDeps extends SandboxDeps {
  /** PUBLIC_URL: a location on its host is this service's own, fetched with its scheme. */
  readonly publicUrl: string;
  /** The payer's HTTP connections (fetch.ts). */
  readonly connections: PayerConnections;
  /** The root of the payload-signing chain the service was given (QR_SIGNING_CHAIN_FILE), trusted beside the database's. */
  readonly signingRoots?: readonly X509Certificate[] | undefined;
}

export interface PayInput {
  pixCopiaECola: string;
  payer: { name: string; document: string; ispb?: string | undefined };
  amount?: string | undefined;
  paidAt?: string | undefined;
  /**
   * A code of Pix Automático: whether the payer approves its recurrence (the default) or, for
   * a composite code, only pays its charge (`decline`); and the payer's maximum per charge where
   * the recurrence fixes no amount.
   */
  recurrence?: { decision?: 'approve' | 'decline' | undefined; valorMaximo?: string | undefined } | undefined;
}

/** The answer: `transactionId` is null when the receiver is at another institution (nothing credited here). */
export interface PayerPayment {
  endToEndId: string | null;
  transactionId: number | null;
  amount: string | null;
  txid: string | null;
  /** What was paid: a charge of this service (its txid), a Pix to a key of this service, one to another institution's, or nothing (a recurrence's code alone). */
  paid: 'charge' | 'key' | 'elsewhere' | 'nothing';
  /** The key paid (static codes). */
  key?: string;
  /** A code of Pix Automático: the recurrence the payer approved, and by which journey. */
  recurrence?: ApprovedRecurrence;
}

export interface ApprovedRecurrence {
  idRec: string;
  status: string;
  tipoJornada: string;
}

/** IBGE code of São Paulo: the payer's municipality sent as a cobv location's codMun. */
export const PAYER_COD_MUN = '3550308';

interface Payment {
  payer: { name: string; document: string; ispb?: string | undefined };
  requested: bigint | undefined;
  paidAt: Date;
}

function brCodeOf(text: string): AnyBrCode {
  try {
    return parseAnyBrCode(text);
  } catch (error) {
    if (error instanceof BrCodeError) throw unprocessable('BRCODE_INVALID', error.message);
    throw error;
  }
}

function paymentOf(deps: PayerDeps, input: PayInput): Payment {
  const document = normalizeDocument(input.payer.document);
  if (!documentType(document)) throw badRequest('INVALID_DOCUMENT', 'payer.document must be a valid CPF or CNPJ');
  const requested = input.amount === undefined ? undefined : parseDecimal2(input.amount);
  if (requested === null || requested === 0n) throw badRequest('INVALID_AMOUNT', 'amount must be a decimal string with 2 places, greater than 0 ("10.00")');
  const now = deps.clock.now();
  const paidAt = input.paidAt === undefined ? now : new Date(input.paidAt);
  if (Number.isNaN(paidAt.getTime()) || paidAt.getTime() > now.getTime()) throw badRequest('INVALID_PAID_AT', 'paidAt must be a timestamp that is not in the future');
  return { payer: { ...input.payer, document }, requested, paidAt };
}

/**
 * POST /sandbox/payer/pay. A code of Pix Automático is read as a payer's app reads it: the
 * recurrence's location is fetched and its JWS verified like a charge's, and the recurrence is
 * approved (journey 2, a recurrence's code alone; journey 3, a composite code of a cob, paid in
 * the same act; journey 4, of a cobv) unless the payer declines it and only pays.
 */
export async function payBrCode(deps: PayerDeps, input: PayInput): Promise<PayerPayment> {
  const code = brCodeOf(input.pixCopiaECola);
  const payment = paymentOf(deps, input);
  const decision = input.recurrence?.decision ?? 'approve';
  if (code.kind === 'recurrence') {
    if (decision === 'decline') {
      throw unprocessable('BRCODE_NOT_PAYABLE', `The code is a Pix Automático recurrence's alone (${code.recurrence}): it carries no payment, so there is nothing to pay without approving it`);
    }
    const offered = await offeredRecurrence(deps, code.recurrence, payment, input.recurrence?.valorMaximo);
    const recurrence = await approveOffered(deps, offered, payment, 'JORNADA_2');
    return { endToEndId: null, transactionId: null, amount: null, txid: null, paid: 'nothing', recurrence };
  }
  const offered = code.recurrence !== undefined && decision === 'approve' ? await offeredRecurrence(deps, code.recurrence, payment, input.recurrence?.valorMaximo) : undefined;
  const paid: PayerPayment & { tipoCob?: TipoCob } = code.kind === 'static' ? await payStatic(deps, code, payment) : await payDynamic(deps, code.location, payment);
  if (!offered) return paid;
  // A cob's composite code is journey 3; a cobv's, or a static code's tied to a contract, journey 4.
  const jornada = 'tipoCob' in paid && paid.tipoCob === 'cob' ? 'JORNADA_3' : 'JORNADA_4';
  const recurrence = await approveOffered(deps, offered, payment, jornada, jornada === 'JORNADA_3' ? (paid.txid ?? undefined) : undefined);
  return { ...paid, recurrence };
}

/** A txid a Pix can carry: 1 to 35 characters of [a-zA-Z0-9] (BCB's `Pix.txid`; `***`, no txid, is read as none). */
const PIX_TXID = /^[a-zA-Z0-9]{1,35}$/;

async function payStatic(deps: PayerDeps, code: BrCode, payment: Payment): Promise<PayerPayment> {
  if (code.txid !== null && !PIX_TXID.test(code.txid)) throw unprocessable('BRCODE_INVALID', 'The code\'s txid (62-05) is not 1 to 35 characters of [a-zA-Z0-9]');
  const amountCentavos = amountPaid(code.amountCentavos ?? 0n, code.amountCentavos === null, payment.requested);
  return payKey(deps, { txid: code.txid, chave: code.key, amountCentavos }, payment);
}

/**
 * A Pix to a key, carrying a txid when the code has one: to a key of this service it is an
 * incoming Pix. A txid that names a charge of the key's account pays that charge, under its
 * rules: one expired, removed or already paid is refused with the reason, whatever code carries
 * its txid. Any other txid is only carried. To another institution's key it is only simulated.
 */
async function payKey(deps: PayerDeps, terms: { txid: string | null } & Omit<PayloadTerms, 'txid'>, payment: Payment): Promise<PayerPayment> {
  const parsed = parsePixKey(terms.chave);
  if (!parsed) throw unprocessable('BRCODE_INVALID', 'The code names no valid Pix key (CPF, CNPJ, e-mail, +55 phone or EVP)');
  const key = await findKey(deps.db, parsed.key);
  if (!key) throw unprocessable('PIX_KEY_NOT_FOUND', `The key ${parsed.key} is not in the directory`);
  const amount = formatCentavos(terms.amountCentavos);
  if (key.account_id === null) {
    const endToEndId = pixIdentifier('E', payment.payer.ispb ?? SANDBOX_PAYER_ISPB, payment.paidAt);
    return { endToEndId, transactionId: null, amount, txid: terms.txid, paid: 'elsewhere', key: parsed.key };
  }
  const charge = terms.txid === null ? undefined : await chargeOfTxid(deps, key.account_id, terms.txid);
  if (charge) {
    const status = effectiveStatus(charge, payment.paidAt);
    // The PSP removes a charge when it expires, and for nothing else.
    if (status === 'REMOVIDA_PELO_PSP') throw chargeExpired(charge);
    if (status !== 'ATIVA') {
      const why = status === 'CONCLUIDA' ? 'already paid' : 'removed by the receiver';
      throw unprocessable('CHARGE_NOT_ACTIVE', `The code's txid ${terms.txid} is a charge of the key's account that is ${status} (${why}): it cannot be paid`);
    }
  }
  const received = await receiveIncomingPix(deps, {
    pixKey: parsed.key,
    amount,
    payer: payment.payer,
    txid: terms.txid ?? undefined,
    // A charge's txid pays it (its rules apply); another only rides on the Pix.
    txidOf: charge ? 'charge' : 'code',
    receivedAt: payment.paidAt.toISOString(),
  });
  return { ...received, amount, txid: terms.txid, paid: charge ? 'charge' : 'key', key: parsed.key };
}

/** The account's charge (cob or cobv) with this txid: txids are unique per account. */
async function chargeOfTxid(deps: PayerDeps, accountId: bigint, txid: string): Promise<ChargeRow | undefined> {
  return (await findCharge(deps.db, accountId, txid, 'cob')) ?? (await findCharge(deps.db, accountId, txid, 'cobv'));
}

interface Target {
  url: URL;
  kind: TipoCob;
  /** The location is this service's own (on PUBLIC_URL's host). */
  ours: boolean;
  token: string;
  /** The payment date a cobv's payload is asked for (DPP). */
  day: string;
}

/**
 * Where a location is fetched: PUBLIC_URL's scheme on its host, https elsewhere. A cobv with
 * codMun and DPP today: a location serves no past day (BCB: DPP before the present is
 * CobPayloadOperacaoInvalida), so a back-dated payment is priced for its own day afterwards.
 */
function targetOf(publicUrl: string, location: string, now: Date): Target {
  const own = new URL(publicUrl);
  const probe = URL.canParse(`https://${location}`) ? new URL(`https://${location}`) : null;
  if (!probe || probe.username || probe.password || probe.hash) throw unprocessable('BRCODE_INVALID', `The location ${location} is not a URL`);
  const ours = probe.host === own.host;
  const url = new URL(`${ours ? own.protocol : 'https:'}//${location}`);
  const segments = url.pathname.split('/');
  const kind: TipoCob = segments.at(-2) === 'cobv' ? 'cobv' : 'cob';
  const day = saoPauloDay(now);
  if (kind === 'cobv') {
    url.searchParams.set('DPP', day);
    url.searchParams.set('codMun', PAYER_COD_MUN);
  }
  return { url, kind, ours, token: segments.at(-1) ?? '', day };
}

/** BCB's problem for a location that shows no charge (404), or no longer will (410): the charge is not there to pay. */
const NOT_SERVED = 'CobPayloadNaoEncontrado';

async function fetchJws(deps: PayerDeps, target: Target): Promise<string> {
  try {
    return (await fetchText(deps.connections, target.url, 'application/jose')).body.trim();
  } catch (error) {
    if (!(error instanceof FetchFailure)) throw error;
    throw await refusalOf(deps, target, error);
  }
}

/**
 * What the payer concludes from a location that gave no payload. BCB: a location that showed a
 * charge and no longer will answers 410, one that shows none 404, both CobPayloadNaoEncontrado,
 * which a PSP may answer for a charge paid, removed or expired: the charge is not there to pay.
 * A location of this service says which (the charge's status in the core).
 */
async function refusalOf(deps: PayerDeps, target: Target, failure: FetchFailure): Promise<AppError> {
  const answered = `HTTP ${failure.status}${failure.problem ? ` ${failure.problem.name}` : ''}`;
  const notServed = failure.status === 410 || (failure.status === 404 && failure.problem?.name === NOT_SERVED);
  if (notServed && target.ours) {
    const charge = await chargeAtOwnLocation(deps, target.token);
    if (!charge) return unprocessable('LOCATION_UNREACHABLE', `The location ${target.url.href} serves no charge (${answered})`);
    const status = effectiveStatus(charge, deps.clock.now());
    if (status === 'REMOVIDA_PELO_PSP') return chargeExpired(charge);
    if (status !== 'ATIVA') return unprocessable('CHARGE_NOT_ACTIVE', `The charge is not ATIVA (it is ${status}; its location answered ${answered})`);
  }
  if (notServed) return unprocessable('CHARGE_NOT_ACTIVE', `The location answered ${answered}: the charge is not there to pay (paid, removed or expired)`);
  const detail = failure.problem?.detail ? ` (${failure.problem.name}: ${failure.problem.detail})` : '';
  return unprocessable('LOCATION_UNREACHABLE', `The location ${target.url.href} could not be read: ${failure.message}${detail}`);
}

/** The charge a location of this service was made for, whether or not it still serves it. */
async function chargeAtOwnLocation(deps: PayerDeps, token: string): Promise<ChargeRow | undefined> {
  const location = await findLocationByToken(deps.db, token);
  return location?.txid ? findCharge(deps.db, location.account_id, location.txid, location.tipo_cob) : undefined;
}

function chargeExpired(charge: ChargeRow): AppError {
  if (charge.due_date !== null) {
    const last = lastPayableDay(charge.due_date, charge.validade_apos_vencimento ?? 0);
    return unprocessable('CHARGE_EXPIRED', `The charge could be paid until ${last} (dataDeVencimento + validadeAposVencimento)`);
  }
  return unprocessable('CHARGE_EXPIRED', `The charge expired at ${expiresAt(charge).toISOString()} (calendario.criacao + expiracao)`);
}

/** The root (last certificate) of QR_SIGNING_CHAIN_FILE, which signs the service's own payloads when it is set. */
export function signingRootsOf(qrSigning: { chainFile: string } | undefined): X509Certificate[] {
  const root = qrSigning ? pemChain(readFileSync(qrSigning.chainFile, 'utf8')).at(-1) : undefined;
  return root ? [new X509Certificate(root)] : [];
}

/** The roots the sandbox trusts: the payload-signing root kept with the database, and the root of QR_SIGNING_CHAIN_FILE. */
async function trustedRoots(deps: PayerDeps): Promise<X509Certificate[]> {
  const authority = await findAuthority(deps.db);
  return [...(authority ? [new X509Certificate(Buffer.from(authority.certificate, 'base64'))] : []), ...(deps.signingRoots ?? [])];
}

/** A location's JWS verified as BCB's security manual says (jku, x5t, chain to a trusted root, signature): its payload's text. */
async function verifiedPayload(deps: PayerDeps, url: URL, jws: string): Promise<string> {
  return verifyPayloadJws(jws, {
    origin: new URL(url.origin),
    fetchJwkSet: async (jku) => (await fetchText(deps.connections, jku, 'application/json')).body,
    trustedRoots: await trustedRoots(deps),
    now: deps.clock.now(),
  });
}

async function payDynamic(deps: PayerDeps, location: string, payment: Payment): Promise<PayerPayment & { tipoCob: TipoCob }> {
  const target = targetOf(deps.publicUrl, location, deps.clock.now());
  const jws = await fetchJws(deps, target);
  const text = await verifiedPayload(deps, target.url, jws);
  const terms = payloadTerms(target.kind, text, payment.paidAt, payment.requested, target.day);
  if (target.ours) return { ...(await payLocation(deps, target.token, terms, payment)), tipoCob: target.kind };
  // Another PSP's cobv paid on an earlier day: only that PSP knows what it asked then; the
  // simulated payment takes the payload's amount.
  const amountCentavos = terms.priceOn === undefined ? terms.amountCentavos : amountPaid(terms.amountCentavos, false, payment.requested);
  return { ...(await payKey(deps, { ...terms, amountCentavos }, payment)), tipoCob: target.kind };
}

/** The recurrence a code offers, read from its verified payload, and where it is kept when it is this service's. */
interface OfferedRecurrence {
  idRec: string;
  /** The location is this service's: the recurrence is approved in the core. */
  ours: boolean;
  token: string;
  valorMaximoCentavos: bigint | null;
}


/**
 * Fetches a recurrence's location (`80-25`) and verifies its JWS exactly as a charge's; reads
 * the RecPayload, and checks the payer's maximum against it (only where it fixes no amount, and
 * not under its floor). Nothing is approved yet: a composite code's charge is paid first.
 */
async function offeredRecurrence(deps: PayerDeps, location: string, payment: Payment, valorMaximo: string | undefined): Promise<OfferedRecurrence> {
  if (payment.payer.ispb === deps.ispb) {
    throw notApprovable(`the payer's PSP is this institution (${deps.ispb}): its account holders approve recurrences through their own account`);
  }
  const target = targetOf(deps.publicUrl, location, deps.clock.now());
  let jws: string;
  try {
    jws = (await fetchText(deps.connections, target.url, 'application/jose')).body.trim();
  } catch (error) {
    if (!(error instanceof FetchFailure)) throw error;
    const answered = `HTTP ${error.status}${error.problem ? ` ${error.problem.name}` : ''}`;
    if (error.problem?.name === 'RecPayloadOperacaoInvalida') throw notApprovable(`its location answered ${answered}: it is expired, rejected or cancelled`);
    throw unprocessable('LOCATION_UNREACHABLE', `The recurrence's location ${target.url.href} could not be read: ${error.message} (${answered})`);
  }
  const terms = recPayloadTerms(await verifiedPayload(deps, target.url, jws));
  let valorMaximoCentavos: bigint | null = null;
  if (valorMaximo !== undefined) {
    valorMaximoCentavos = parseDecimal2(valorMaximo);
    if (valorMaximoCentavos === null || valorMaximoCentavos <= 0n) throw badRequest('INVALID_AMOUNT', 'recurrence.valorMaximo must be a decimal string with 2 places, greater than 0 ("10.00")');
    if (terms.valorRec !== null) throw notApprovable(`it charges a fixed amount (${formatCentavos(terms.valorRec)}): the payer sets no maximum`);
    if (terms.valorMinimo !== null && valorMaximoCentavos < terms.valorMinimo) {
      throw notApprovable(`the payer's maximum ${valorMaximo} is under the receiver's floor (valorMinimoRecebedor ${formatCentavos(terms.valorMinimo)})`);
    }
  }
  return { idRec: terms.idRec, ours: target.ours, token: target.token, valorMaximoCentavos };
}

/** The payer approves the offered recurrence: in the core when it is this service's; another institution's is only simulated. */
async function approveOffered(deps: PayerDeps, offered: OfferedRecurrence, payment: Payment, jornada: 'JORNADA_2' | 'JORNADA_3' | 'JORNADA_4', txid?: string): Promise<ApprovedRecurrence> {
  if (!offered.ours) return { idRec: offered.idRec, status: 'APROVADA', tipoJornada: jornada };
  const ispb = payment.payer.ispb ?? SANDBOX_PAYER_ISPB;
  const document = payment.payer.document;
  return deps.db.transaction().execute(async (trx) => {
    const row = await recurrenceAtLocation(trx, offered.token, { forUpdate: true });
    if (!row || row.id_rec !== offered.idRec) throw notApprovable("its location no longer serves the recurrence its payload named");
    if (row.status !== 'CRIADA') throw notApprovable(`it is ${row.status}: only a CRIADA recurrence is approved`);
    const approved = await approveRecurrence(
      trx,
      row,
      {
        jornada,
        pagador: { [document.length === 11 ? 'cpf' : 'cnpj']: document, nome: payment.payer.name, ispbParticipante: ispb, codMun: PAYER_COD_MUN },
        maximoCentavos: offered.valorMaximoCentavos,
        ...(txid === undefined ? {} : { txid }),
      },
      deps.clock.now(),
    );
    return { idRec: approved.id_rec, status: approved.status, tipoJornada: approved.jornada };
  });
}

/**
 * A location of this service: its charge is paid through the core, as an incoming Pix. A cobv
 * paid on an earlier day than its payload's is paid what the core says it asked that day.
 */
async function payLocation(deps: PayerDeps, token: string, terms: PayloadTerms, payment: Payment): Promise<PayerPayment> {
  const location = await findLocationByToken(deps.db, token);
  if (location?.txid !== terms.txid) {
    throw unprocessable('PAYLOAD_INVALID', "The signed payload is not a charge a payer can pay: its txid is not the location's charge");
  }
  let amountCentavos = terms.amountCentavos;
  if (terms.priceOn !== undefined) {
    const charge = await findCharge(deps.db, location.account_id, terms.txid, 'cobv');
    if (charge) amountCentavos = amountPaid(cobvDueOn(charge, terms.priceOn).finalCentavos, false, payment.requested);
  }
  const ispb = payment.payer.ispb ?? SANDBOX_PAYER_ISPB;
  const paid = await payCharge(deps, {
    txid: terms.txid,
    accountId: location.account_id,
    amountCentavos,
    payer: { name: payment.payer.name, document: payment.payer.document, ispb, bankName: payment.payer.ispb ? null : SANDBOX_PAYER_BANK },
    at: payment.paidAt,
    now: deps.clock.now(),
  });
  return { ...paid, amount: formatCentavos(amountCentavos), txid: terms.txid, paid: 'charge' };
}
