import { X509Certificate } from 'node:crypto';
import type { Agent } from 'undici';
import { badRequest, unprocessable } from '../../http/errors.ts';
import { BrCodeError, parseAnyBrCode, type AnyBrCode, type BrCode } from '../../lib/brcode.ts';
import { documentType, normalizeDocument } from '../../lib/document.ts';
import { pixIdentifier } from '../../lib/ids.ts';
import { formatCentavos, parseDecimal2 } from '../../lib/money.ts';
import { parsePixKey } from '../../lib/pix-key.ts';
import { payCharge } from '../charges/service.ts';
import { findKey } from '../directory/repo.ts';
import { findLocationByToken } from '../locations/repo.ts';
import { findAuthority } from '../locations/signing/repo.ts';
import { receiveIncomingPix, SANDBOX_PAYER_BANK, SANDBOX_PAYER_ISPB, type SandboxDeps } from '../sandbox/service.ts';
import { fetchText, FetchFailure } from './fetch.ts';
import { verifyPayloadJws } from './jws.ts';
import { amountPaid, payloadTerms, saoPauloDay, type PayloadTerms, type TipoCob } from './payload.ts';

/**
 * The sandbox payer: pays any BR Code the way a payer's institution does (docs/guide/payer.md).
 * A payment to a key or a location of this service is exactly an incoming Pix; one to another
 * institution's key is only simulated: nothing is credited here.
 */
export interface PayerDeps extends SandboxDeps {
  /** PUBLIC_URL: a location on its host is this service's own, fetched with its scheme. */
  readonly publicUrl: string;
  /** The payer's HTTP connections (fetch.ts payerAgent). */
  readonly agent: Agent;
}

export interface PayInput {
  pixCopiaECola: string;
  payer: { name: string; document: string; ispb?: string | undefined };
  amount?: string | undefined;
  paidAt?: string | undefined;
}

/** The answer: `transactionId` is null when the receiver is at another institution (nothing credited here). */
export interface PayerPayment {
  endToEndId: string;
  transactionId: number | null;
  amount: string;
  txid: string | null;
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

/** POST /sandbox/payer/pay */
export async function payBrCode(deps: PayerDeps, input: PayInput): Promise<PayerPayment> {
  const code = brCodeOf(input.pixCopiaECola);
  const payment = paymentOf(deps, input);
  if (code.kind === 'static') return payStatic(deps, code, payment);
  return payDynamic(deps, code.location, payment);
}

async function payStatic(deps: PayerDeps, code: BrCode, payment: Payment): Promise<PayerPayment> {
  const amountCentavos = amountPaid(code.amountCentavos ?? 0n, code.amountCentavos === null, payment.requested);
  return payKey(deps, { txid: code.txid, chave: code.key, amountCentavos }, payment);
}

/**
 * A Pix to a key, carrying a txid when the code has one: to a key of this service it is an
 * incoming Pix (which pays the account's charge of that txid); to another institution's key it
 * is only simulated.
 */
async function payKey(deps: PayerDeps, terms: { txid: string | null } & Omit<PayloadTerms, 'txid'>, payment: Payment): Promise<PayerPayment> {
  const parsed = parsePixKey(terms.chave);
  if (!parsed) throw unprocessable('BRCODE_INVALID', 'The code names no valid Pix key (CPF, CNPJ, e-mail, +55 phone or EVP)');
  const key = await findKey(deps.db, parsed.key);
  if (!key) throw unprocessable('PIX_KEY_NOT_FOUND', `The key ${parsed.key} is not in the directory`);
  const amount = formatCentavos(terms.amountCentavos);
  if (key.account_id === null) {
    const endToEndId = pixIdentifier('E', payment.payer.ispb ?? SANDBOX_PAYER_ISPB, payment.paidAt);
    return { endToEndId, transactionId: null, amount, txid: terms.txid };
  }
  const received = await receiveIncomingPix(deps, {
    pixKey: parsed.key,
    amount,
    payer: payment.payer,
    txid: terms.txid ?? undefined,
    receivedAt: payment.paidAt.toISOString(),
  });
  return { ...received, amount, txid: terms.txid };
}

interface Target {
  url: URL;
  kind: TipoCob;
  /** The location is this service's own (on PUBLIC_URL's host). */
  ours: boolean;
  token: string;
}

/** Where a location is fetched: PUBLIC_URL's scheme on its host, https elsewhere; a cobv with DPP and codMun. */
function targetOf(publicUrl: string, location: string, paidAt: Date): Target {
  const own = new URL(publicUrl);
  const probe = URL.canParse(`https://${location}`) ? new URL(`https://${location}`) : null;
  if (!probe || probe.username || probe.password || probe.hash) throw unprocessable('BRCODE_INVALID', `The location ${location} is not a URL`);
  const ours = probe.host === own.host;
  const url = new URL(`${ours ? own.protocol : 'https:'}//${location}`);
  const segments = url.pathname.split('/');
  const kind: TipoCob = segments.at(-2) === 'cobv' ? 'cobv' : 'cob';
  if (kind === 'cobv') {
    url.searchParams.set('DPP', saoPauloDay(paidAt));
    url.searchParams.set('codMun', PAYER_COD_MUN);
  }
  return { url, kind, ours, token: segments.at(-1) ?? '' };
}

async function fetchJws(deps: PayerDeps, url: URL): Promise<string> {
  try {
    return (await fetchText(deps.agent, url, 'application/jose')).body.trim();
  } catch (error) {
    if (!(error instanceof FetchFailure)) throw error;
    if (error.status === 410) throw unprocessable('CHARGE_NOT_ACTIVE', 'The location answered 410: the charge is gone');
    throw unprocessable('LOCATION_UNREACHABLE', `The location ${url.href} could not be read: ${error.message}`);
  }
}

/** The roots the sandbox trusts: the payload-signing root kept with the database. */
async function trustedRoots(deps: PayerDeps): Promise<X509Certificate[]> {
  const authority = await findAuthority(deps.db);
  return authority ? [new X509Certificate(Buffer.from(authority.certificate, 'base64'))] : [];
}

async function payDynamic(deps: PayerDeps, location: string, payment: Payment): Promise<PayerPayment> {
  const target = targetOf(deps.publicUrl, location, payment.paidAt);
  const jws = await fetchJws(deps, target.url);
  const text = await verifyPayloadJws(jws, {
    origin: new URL(target.url.origin),
    fetchJwkSet: async (url) => (await fetchText(deps.agent, url, 'application/json')).body,
    trustedRoots: await trustedRoots(deps),
    now: deps.clock.now(),
  });
  const terms = payloadTerms(target.kind, text, payment.paidAt, payment.requested);
  if (!target.ours) return payKey(deps, terms, payment);
  return payLocation(deps, target.token, terms, payment);
}

/** A location of this service: its charge is paid through the core, as an incoming Pix. */
async function payLocation(deps: PayerDeps, token: string, terms: PayloadTerms, payment: Payment): Promise<PayerPayment> {
  const location = await findLocationByToken(deps.db, token);
  if (location?.txid !== terms.txid) {
    throw unprocessable('PAYLOAD_INVALID', "The signed payload is not a charge a payer can pay: its txid is not the location's charge");
  }
  const ispb = payment.payer.ispb ?? SANDBOX_PAYER_ISPB;
  const paid = await payCharge(deps, {
    txid: terms.txid,
    accountId: location.account_id,
    amountCentavos: terms.amountCentavos,
    payer: { name: payment.payer.name, document: payment.payer.document, ispb, bankName: payment.payer.ispb ? null : SANDBOX_PAYER_BANK },
    at: payment.paidAt,
    now: deps.clock.now(),
  });
  return { ...paid, amount: formatCentavos(terms.amountCentavos), txid: terms.txid };
}
