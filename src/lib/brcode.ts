/**
 * The Pix "copia e cola" payload: an EMV MPM string (the BR Code of BCB's Manual de Padrões
 * para Iniciação do Pix) that names the receiver's key, the amount, the merchant and the txid,
 * closed by a CRC16/CCITT-FALSE. Every field is ID (2 digits) + length (2 digits) + value.
 *
 * Choices, where the manual leaves room:
 * - A static code carries the key in the payload itself (26-01). Field 01 is "12" (use once)
 *   when a txid is given, since a charge is paid once; without a txid it is omitted (reusable
 *   code). A dynamic code (`buildDynamicBrCode`) carries a location URL (26-25) instead.
 * - Every value is printable ASCII, so lengths in characters are lengths in bytes. Name, city
 *   and description lose their diacritics ("São Paulo" -> "Sao Paulo"); case is kept.
 * - The manual limits the txid of a static code to 25 characters, but a `cob` txid has 26 to 35
 *   (API Pix), so up to 35 alphanumerics are accepted here.
 */
import { formatCentavos, parseDecimal } from './money.ts';

export class BrCodeError extends Error {
  override readonly name = 'BrCodeError';
}

export interface BrCodeInput {
  key: string;
  amountCentavos?: bigint;
  merchantName: string;
  merchantCity: string;
  txid?: string;
  description?: string;
}

/** What `parseBrCode` reads back; absent optional fields are null. */
export interface BrCode {
  key: string;
  amountCentavos: bigint | null;
  merchantName: string;
  merchantCity: string;
  /** Null when the payload carries the "no txid" marker `***`. */
  txid: string | null;
  description: string | null;
  /** Field 01 is "12": the payer's app should not let the code be paid twice. */
  oneTime: boolean;
}

export const PIX_GUI = 'br.gov.bcb.pix';
export const BRCODE_KEY_MAX_LENGTH = 77;
export const BRCODE_NAME_MAX_LENGTH = 25;
export const BRCODE_CITY_MAX_LENGTH = 15;
/** Field 54 holds at most 13 characters: 9999999999.99. */
export const BRCODE_MAX_AMOUNT_CENTAVOS = 999_999_999_999n;
const TLV_MAX_LENGTH = 99;
const NO_TXID = '***';
const KEY = /^[\x21-\x7e]{1,77}$/;
const TXID = /^[a-zA-Z0-9]{1,35}$/;

/** Field 26 without a description: GUI (4 + 14 characters) and the key (4 + its length). */
function merchantAccountBaseLength(key: string): number {
  return 4 + PIX_GUI.length + 4 + key.length;
}

/**
 * How many characters of description (26-02) fit beside `key` in field 26, at most 99 long.
 * Zero when none fits (keys over 69 characters).
 */
export function brCodeDescriptionRoom(key: string): number {
  return Math.max(0, TLV_MAX_LENGTH - merchantAccountBaseLength(key) - 4);
}

/** One TLV field. Values are ASCII (checked by the callers), so length counts bytes too. */
function tlv(id: string, value: string): string {
  if (value.length === 0 || value.length > TLV_MAX_LENGTH) {
    throw new BrCodeError(`BR Code field ${id} must be 1 to ${TLV_MAX_LENGTH} characters (got ${value.length})`);
  }
  return `${id}${value.length.toString().padStart(2, '0')}${value}`;
}

/**
 * Free text as printable ASCII: accents and other combining marks removed after NFD
 * ("ç" -> "c"), characters without an ASCII base dropped ("ø", emoji), runs of white space
 * made one space, trimmed, then cut to `max` characters.
 */
export function normalizeBrCodeText(text: string, max: number): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/\s/gu, ' ')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim()
    .slice(0, max)
    .trimEnd();
}

function requiredText(field: string, text: string, max: number): string {
  const normalized = normalizeBrCodeText(text, max);
  if (normalized.length === 0) throw new BrCodeError(`BR Code ${field} is empty once normalised`);
  return normalized;
}

function amountField(amountCentavos: bigint | undefined): string {
  if (amountCentavos === undefined) return '';
  if (amountCentavos <= 0n || amountCentavos > BRCODE_MAX_AMOUNT_CENTAVOS) {
    throw new BrCodeError(`BR Code amount must be 1 to ${BRCODE_MAX_AMOUNT_CENTAVOS} centavos (got ${amountCentavos})`);
  }
  return tlv('54', formatCentavos(amountCentavos));
}

function merchantAccountField(key: string, description: string | undefined): string {
  if (!KEY.test(key)) {
    throw new BrCodeError(`BR Code key must be 1 to ${BRCODE_KEY_MAX_LENGTH} printable ASCII characters without spaces`);
  }
  const text = description === undefined ? '' : normalizeBrCodeText(description, Number.MAX_SAFE_INTEGER);
  const room = brCodeDescriptionRoom(key);
  if (text.length > room) {
    throw new BrCodeError(`BR Code description is ${text.length} characters; ${room} fit beside this key`);
  }
  return tlv('26', tlv('00', PIX_GUI) + tlv('01', key) + (text ? tlv('02', text) : ''));
}

/** A dynamic code: the payer's bank fetches the charge from `location` (a URL without its scheme). */
export interface DynamicBrCodeInput {
  location: string;
  merchantName: string;
  merchantCity: string;
}

/** The longest location field 26-25 holds: BCB's limit for a location URL. */
export const BRCODE_LOCATION_MAX_LENGTH = 77;
const LOCATION = /^[\x21-\x7e]{1,77}$/;

/** Field 25 of a template: a location, a URL without its scheme (`location`, `charge location`...). */
function locationField(what: string, location: string): string {
  if (!LOCATION.test(location) || /^https?:/i.test(location)) {
    throw new BrCodeError(`BR Code ${what} must be a URL without its scheme, 1 to ${BRCODE_LOCATION_MAX_LENGTH} printable characters`);
  }
  return tlv('25', location);
}

/**
 * Builds a dynamic copy-and-paste payload (the manual's "QR dinâmico"): point of initiation 12,
 * the location in 26-25 and no key, no amount (the payload at the location says it), and the
 * txid field 62-05 set to `***`.
 */
export function buildDynamicBrCode(input: DynamicBrCodeInput): string {
  const body = [
    tlv('00', '01'),
    tlv('01', '12'),
    tlv('26', tlv('00', PIX_GUI) + locationField('location', input.location)),
    tlv('52', '0000'),
    tlv('53', '986'),
    tlv('58', 'BR'),
    tlv('59', requiredText('merchant name', input.merchantName, BRCODE_NAME_MAX_LENGTH)),
    tlv('60', requiredText('merchant city', input.merchantCity, BRCODE_CITY_MAX_LENGTH)),
    tlv('62', tlv('05', NO_TXID)),
    '6304',
  ].join('');
  return body + crc16Ccitt(body);
}

/** A recurrence's code (Pix Automático): its location, and the charge's when the code is composite. */
export interface RecurrenceBrCodeInput {
  /** The recurrence's payload location (`host/qr/v2/rec/{token}`), without its scheme. */
  recLocation: string;
  /** The location of the charge paid in the same act (journey 3: a cob; journey 4: a cobv). */
  chargeLocation?: string | undefined;
  merchantName: string;
  merchantCity: string;
}

/**
 * Builds a recurrence's code as BCB's examples lay it out (decision 0046): field 80 (GUI and the
 * recurrence's location in 80-25) after 62. Alone (journey 2) field 26 holds only the GUI and
 * there is no point of initiation; composite (journeys 3 and 4) it is the charge's dynamic code
 * with field 80 added.
 */
export function buildRecurrenceBrCode(input: RecurrenceBrCodeInput): string {
  const charge = input.chargeLocation === undefined ? '' : locationField('charge location', input.chargeLocation);
  const body = [
    tlv('00', '01'),
    input.chargeLocation === undefined ? '' : tlv('01', '12'),
    tlv('26', tlv('00', PIX_GUI) + charge),
    tlv('52', '0000'),
    tlv('53', '986'),
    tlv('58', 'BR'),
    tlv('59', requiredText('merchant name', input.merchantName, BRCODE_NAME_MAX_LENGTH)),
    tlv('60', requiredText('merchant city', input.merchantCity, BRCODE_CITY_MAX_LENGTH)),
    tlv('62', tlv('05', NO_TXID)),
    tlv('80', tlv('00', PIX_GUI) + locationField('recurrence location', input.recLocation)),
    '6304',
  ].join('');
  return body + crc16Ccitt(body);
}

/** Builds the copy-and-paste payload. Throws BrCodeError on input that cannot be encoded. */
export function buildBrCode(input: BrCodeInput): string {
  if (input.txid !== undefined && !TXID.test(input.txid)) {
    throw new BrCodeError('BR Code txid must be 1 to 35 characters of [a-zA-Z0-9]');
  }
  const body = [
    tlv('00', '01'),
    input.txid === undefined ? '' : tlv('01', '12'),
    merchantAccountField(input.key, input.description),
    tlv('52', '0000'),
    tlv('53', '986'),
    amountField(input.amountCentavos),
    tlv('58', 'BR'),
    tlv('59', requiredText('merchant name', input.merchantName, BRCODE_NAME_MAX_LENGTH)),
    tlv('60', requiredText('merchant city', input.merchantCity, BRCODE_CITY_MAX_LENGTH)),
    tlv('62', tlv('05', input.txid ?? NO_TXID)),
    '6304',
  ].join('');
  return body + crc16Ccitt(body);
}

const CRC_TABLE = Uint16Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
  return crc & 0xffff;
});
const UTF8 = new TextEncoder();

/** CRC16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection) of the UTF-8 bytes, 4 hex digits. */
export function crc16Ccitt(text: string): string {
  let crc = 0xffff;
  for (const byte of UTF8.encode(text)) crc = ((crc << 8) & 0xffff) ^ CRC_TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** Reads a TLV list into a map; a repeated ID or a length running past the end is an error. */
function readTlv(text: string, where: string): Map<string, string> {
  const fields = new Map<string, string>();
  let at = 0;
  while (at < text.length) {
    const id = text.slice(at, at + 2);
    const lengthText = text.slice(at + 2, at + 4);
    if (!/^\d{2}$/.test(id) || !/^\d{2}$/.test(lengthText)) {
      throw new BrCodeError(`BR Code ${where}: malformed field header at position ${at}`);
    }
    const length = Number(lengthText);
    const value = text.slice(at + 4, at + 4 + length);
    if (length === 0 || value.length !== length) {
      throw new BrCodeError(`BR Code ${where}: field ${id} has a bad length ${lengthText}`);
    }
    if (fields.has(id)) throw new BrCodeError(`BR Code ${where}: field ${id} is repeated`);
    fields.set(id, value);
    at += 4 + length;
  }
  return fields;
}

function required(fields: Map<string, string>, id: string, where: string): string {
  const value = fields.get(id);
  if (value === undefined) throw new BrCodeError(`BR Code ${where}: field ${id} is missing`);
  return value;
}

/** The CRC is checked first, over everything but its own 4 digits, as payer apps do. */
function checkFrame(payload: string): Map<string, string> {
  if (!/^[\x20-\x7e]{8,}$/.test(payload)) throw new BrCodeError('BR Code must be printable ASCII');
  const crc = payload.slice(-4);
  if (!/^[0-9A-F]{4}$/.test(crc)) throw new BrCodeError('BR Code CRC must be 4 upper-case hex digits');
  const expected = crc16Ccitt(payload.slice(0, -4));
  if (crc !== expected) throw new BrCodeError(`BR Code CRC mismatch: payload says ${crc}, content gives ${expected}`);
  const fields = readTlv(payload, 'payload');
  const ids = [...fields.keys()];
  if (ids[0] !== '00' || fields.get('00') !== '01') throw new BrCodeError('BR Code must start with payload format 00 = "01"');
  if (ids.at(-1) !== '63' || fields.get('63') !== crc) throw new BrCodeError('BR Code must end with the CRC field 63');
  return fields;
}

/**
 * What `parseAnyBrCode` reads: a static code (key, amount), a dynamic one (location; with
 * `recurrence`, the location of a Pix Automático recurrence offered with it: journeys 3 and 4),
 * or a recurrence's code alone (journey 2), which carries no payment.
 */
export type AnyBrCode =
  | ({ kind: 'static'; recurrence?: string } & BrCode)
  | { kind: 'dynamic'; location: string; merchantName: string; merchantCity: string; oneTime: boolean; recurrence?: string }
  | { kind: 'recurrence'; recurrence: string; merchantName: string; merchantCity: string };

/** Field 80's recurrence location (decision 0046), when the code has one. */
function recurrenceOf(fields: Map<string, string>): string | undefined {
  const template = fields.get('80');
  if (template === undefined) return undefined;
  const recurrence = readTlv(template, 'field 80');
  if (required(recurrence, '00', 'field 80').toLowerCase() !== PIX_GUI) throw new BrCodeError(`BR Code field 80 is not a Pix recurrence (GUI ${PIX_GUI})`);
  return required(recurrence, '25', 'field 80');
}

/** Reads a static, dynamic or recurrence payload, checking its CRC and structure. Throws BrCodeError. */
export function parseAnyBrCode(payload: string): AnyBrCode {
  const fields = checkFrame(payload);
  const account = readTlv(required(fields, '26', 'payload'), 'field 26');
  const location = account.get('25');
  const recurrence = recurrenceOf(fields);
  if (location === undefined && recurrence !== undefined && !account.has('01')) {
    return { kind: 'recurrence', recurrence, merchantName: required(fields, '59', 'payload'), merchantCity: required(fields, '60', 'payload') };
  }
  if (location === undefined) return { kind: 'static', ...parseBrCode(payload), ...(recurrence === undefined ? {} : { recurrence }) };
  if (required(account, '00', 'field 26').toLowerCase() !== PIX_GUI) {
    throw new BrCodeError(`BR Code field 26 is not a Pix account (GUI ${PIX_GUI})`);
  }
  if (account.has('01')) throw new BrCodeError('BR Code field 26 carries both a key and a location');
  if (required(fields, '53', 'payload') !== '986') throw new BrCodeError('BR Code currency must be 986 (BRL)');
  if (required(fields, '58', 'payload') !== 'BR') throw new BrCodeError('BR Code country must be BR');
  return {
    kind: 'dynamic',
    location,
    merchantName: required(fields, '59', 'payload'),
    merchantCity: required(fields, '60', 'payload'),
    oneTime: fields.get('01') === '12',
    ...(recurrence === undefined ? {} : { recurrence }),
  };
}

/**
 * Reads a payload back and verifies its CRC and the fields a Pix payment needs. Throws
 * BrCodeError naming the first problem. Location-URL ("dynamic") codes are refused: they carry
 * no key to pay.
 */
export function parseBrCode(payload: string): BrCode {
  const fields = checkFrame(payload);
  const account = readTlv(required(fields, '26', 'payload'), 'field 26');
  if (required(account, '00', 'field 26').toLowerCase() !== PIX_GUI) {
    throw new BrCodeError(`BR Code field 26 is not a Pix account (GUI ${PIX_GUI})`);
  }
  if (!account.has('01')) throw new BrCodeError('BR Code carries no Pix key (location-URL codes are not supported)');
  if (required(fields, '53', 'payload') !== '986') throw new BrCodeError('BR Code currency must be 986 (BRL)');
  if (required(fields, '58', 'payload') !== 'BR') throw new BrCodeError('BR Code country must be BR');
  const amountText = fields.get('54');
  const amountCentavos = amountText === undefined ? null : parseDecimal(amountText);
  if (amountCentavos === null && amountText !== undefined) {
    throw new BrCodeError(`BR Code amount ${JSON.stringify(amountText)} is not a decimal`);
  }
  const additional = fields.has('62') ? readTlv(fields.get('62')!, 'field 62') : new Map<string, string>();
  const txid = additional.get('05');
  return {
    key: account.get('01')!,
    amountCentavos,
    merchantName: required(fields, '59', 'payload'),
    merchantCity: required(fields, '60', 'payload'),
    txid: txid === undefined || txid === NO_TXID ? null : txid,
    description: account.get('02') ?? null,
    oneTime: fields.get('01') === '12',
  };
}
