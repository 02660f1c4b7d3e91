// BCB's dialect in scripts/bench.ts: the public payload location every QR scan hits, beside
// node:crypto signing the same bytes with a key of the same kind (the physical limit); creating
// charges through PUT /v2/cob/{txid}, beside POST /dict/pix in the same run; and the sandbox
// payer's whole dynamic path (fetch the location, verify the JWS and its chain, pay).
import { constants, createPrivateKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Costs } from './bench-db.ts';
import { closedLoop, percentile, type LoadResult } from './bench-load.ts';
import type { ApiClient, ApiRequest } from './lib/api-client.ts';

/** An account of the bench as this module needs it: its headers (token and certificate) and its key. */
export interface BcbAccount {
  key: string;
  headers: Record<string, string>;
}

export interface BcbResults {
  /** node:crypto alone: RSASSA-PSS SHA-256 (PS256) over the same signing input, `clients` at a time. */
  signing: { rate: number; p50: number; p99: number };
  /** GET /qr/v2/{token}: one JWS signed per request. */
  qr: LoadResult & Costs;
  /** POST /dict/pix runs right before and right after the PUT /v2/cob run, with the same clients. */
  dictPix: [LoadResult & Costs, LoadResult & Costs];
  cob: LoadResult & Costs;
  /** POST /sandbox/payer/pay of dynamic codes, each a charge of its own. */
  payer: LoadResult & Costs;
  clients: number;
}

/** Txids unique to this run (26 to 35 letters and digits): each PUT creates a charge. */
const RUN = randomBytes(6).toString('hex');
let sequence = 0;
const txid = (tag: string) => `bench${tag}${(sequence++).toString(36).padStart(10, '0')}${RUN}`;

function cobRequest(account: BcbAccount, id: string): ApiRequest {
  return {
    method: 'PUT',
    path: `/v2/cob/${id}`,
    headers: account.headers,
    body: { calendario: { expiracao: 3600 }, valor: { original: '12.34' }, chave: account.key, solicitacaoPagador: 'Bench' },
  };
}

/** Creates `n` charges through /v2 and returns their pixCopiaECola and location token. */
async function createCharges(api: ApiClient, account: BcbAccount, n: number, tag: string): Promise<{ brCode: string; token: string }[]> {
  const out: { brCode: string; token: string }[] = [];
  for (let i = 0; i < n; i++) {
    const answer = await api.send(cobRequest(account, txid(tag)));
    if (answer.status !== 201) throw new Error(`PUT /v2/cob answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    const body = answer.body as { pixCopiaECola: string; loc: { location: string } };
    out.push({ brCode: body.pixCopiaECola, token: body.loc.location.split('/').pop()! });
  }
  return out;
}

/**
 * The reference: node:crypto signs `input` (a JWS signing input of the service's own) with an
 * RSA-2048 key, the size of the service's signing key, PS256's padding and salt, `clients`
 * signatures in flight at once (the callback form runs on libuv's threads, as WebCrypto does).
 */
export async function signingReference(input: Buffer, clients: number, seconds: number) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const key: KeyObject = createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const options = { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 };
  const once = () => new Promise<void>((resolve, reject) => sign('sha256', input, options, (error) => (error ? reject(error) : resolve())));
  const latencies: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        await once();
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { rate: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

/** The signing input (`header.payload`, base64url) of one JWS the service served. */
async function signingInputOf(api: ApiClient, token: string): Promise<Buffer> {
  const answer = await api.send({ method: 'GET', path: `/qr/v2/${token}`, headers: {} });
  const jws = answer.text;
  if (answer.status !== 200 || jws.split('.').length !== 3) throw new Error(`GET /qr/v2 answered ${answer.status}: ${jws.slice(0, 200)}`);
  return Buffer.from(jws.slice(0, jws.lastIndexOf('.')), 'ascii');
}

/** Every scenario of BCB's dialect, in order, on the bench's service. */
export async function bcbRuns(
  api: ApiClient,
  options: {
    accounts: readonly BcbAccount[];
    /** The account a worker's i-th request is from, spread over them as the transfers are. */
    pick: (worker: number, i: number) => BcbAccount;
    admin: string;
    clients: number;
    seconds: number;
    dictPix: (worker: number, i: number) => ApiRequest;
    /** Runs a load and adds what it cost each process (scripts/bench-db.ts, measured). */
    measure: <R extends LoadResult>(run: () => Promise<R>) => Promise<R & Costs>;
  },
): Promise<BcbResults> {
  const { measure } = options;
  const { clients, seconds, pick } = options;
  const account = options.accounts[0]!;
  const charges = await createCharges(api, account, 20, 'q');
  const input = await signingInputOf(api, charges[0]!.token);
  const qrGet = (worker: number, i: number): ApiRequest => ({ method: 'GET', path: `/qr/v2/${charges[(worker + i) % charges.length]!.token}`, headers: {} });
  await closedLoop(api, clients, 1, qrGet, 200);
  const signing = await signingReference(input, clients, seconds);
  const qr = await measure(() => closedLoop(api, clients, seconds, qrGet, 200));

  const cobPut = (worker: number, i: number) => cobRequest(pick(worker, i), txid('c'));
  await closedLoop(api, clients, 1, cobPut);
  const before = await measure(() => closedLoop(api, clients, seconds, options.dictPix));
  const cob = await measure(() => closedLoop(api, clients, seconds, cobPut));
  const after = await measure(() => closedLoop(api, clients, seconds, options.dictPix));

  // Enough charges for the payer's run: each is paid once.
  const payable = await createCharges(api, account, Math.max(200, Math.round(cob.rate * seconds * 0.5)), 'p');
  let next = 0;
  const pay = (): ApiRequest => ({
    method: 'POST',
    path: '/sandbox/payer/pay',
    headers: { authorization: `Bearer ${options.admin}` },
    body: { pixCopiaECola: payable[next++ % payable.length]!.brCode, payer: { name: 'Bench Payer', document: '52998224725' } },
  });
  const payer = await measure(() => closedLoop(api, clients, Math.min(seconds, Math.max(1, payable.length / Math.max(1, cob.rate))), pay));
  return { signing, qr, dictPix: [before, after], cob, payer, clients };
}
