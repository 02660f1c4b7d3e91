// The list-isolation scenario of scripts/bench.ts: one account with many charges runs heavy
// lists in parallel (GET /cob, 1000 charges a page, the widest interval the API accepts, pages
// spread over all of them) while another account's GET /balance is offered at a fixed rate. What
// counts is the other account's latency and that it is never refused: one account's reads must
// not take the database from the others (docs/decisions/0002-list-isolation.md).
import { closedLoop, openLoop, type LoadResult, type OpenLoopResult } from './bench-load.ts';
import type { ApiClient, ApiRequest } from './lib/api-client.ts';
import { withClient } from './lib/pg.ts';

export interface IsolationSettings {
  /** Charges of the listing account, over the last 30 days. */
  charges: number;
  /** Charges of other accounts in the same table, so that the listing account's are not all there is. */
  otherCharges: number;
  /** Parallel heavy lists (closed loop). */
  listClients: number;
  /** GET /balance of the other account per second (open loop). */
  victimRate: number;
  seconds: number;
}

export interface IsolationResult {
  settings: IsolationSettings;
  /** The other account's balance reads with nobody listing, then during the lists. */
  alone: OpenLoopResult;
  victim: OpenLoopResult;
  /** The listing account's lists during the run. */
  lists: LoadResult;
}

export interface IsolationAccount {
  accountId: number;
  headers: Record<string, string>;
}

/**
 * `n` charges of `accountId` and `others` of the other accounts, created over the last 30 days,
 * then analysed and written out: the lists' workload is not the seed's own write-back.
 */
export async function seedCharges(url: string, accountId: number, n: number, others: number): Promise<void> {
  const insert = (count: number, prefix: string, owner: string) => `
    insert into charges (account_id, txid, status, expiracao_seconds, amount_centavos, chave, devedor, br_code, created_at, updated_at)
    select ${owner}, '${prefix}' || lpad(g::text, 28, '0'), 'ATIVA', 86400, 100 + g % 1000, 'seed@example.com',
           case when g % 3 = 0 then '{"cpf":"52998224725","nome":"Seed"}'::jsonb end,
           '00020101021226' || lpad(g::text, 180, '0'), now() - (g % 2592000) * interval '1 second', now()
      from generate_series(1, ${count}) g, (select array_agg(id order by id) as ids from accounts where id <> $1) o`;
  await withClient(url, async (client) => {
    await client.query(insert(n, 'LISTER', '$1::int8'), [accountId]);
    if (others > 0) await client.query(insert(others, 'OTHERS', 'o.ids[1 + g % cardinality(o.ids)]'), [accountId]);
    await client.query('vacuum analyze charges');
    await client.query('checkpoint');
  });
}

/** The heaviest list the API accepts: 1000 charges a page, a 30-day interval, pages spread over all of them. */
function heavyList(account: IsolationAccount, charges: number) {
  const fim = new Date();
  const inicio = new Date(fim.getTime() - 30 * 86_400_000 - 60_000);
  const pages = Math.max(1, Math.ceil(charges / 1000));
  return (worker: number, i: number): ApiRequest => ({
    method: 'GET',
    path: `/cob?inicio=${inicio.toISOString()}&fim=${fim.toISOString()}&paginacao.itensPorPagina=1000&paginacao.paginaAtual=${(worker * 7 + i) % pages}`,
    headers: account.headers,
  });
}

/**
 * The victim's GET /balance at `victimRate` alone, then again while `listClients` clients list
 * the attacker's charges as fast as they are answered (from a second before the measured run to
 * its end).
 */
export async function listIsolation(http: ApiClient, openHttp: ApiClient, reader: IsolationAccount, lister: IsolationAccount, s: IsolationSettings): Promise<IsolationResult> {
  const balance = (): ApiRequest => ({ method: 'GET', path: '/balance', headers: reader.headers });
  const atRate = () => openLoop(openHttp, { rate: s.victimRate, seconds: s.seconds, cap: 2000 }, balance, undefined, 200);
  await openLoop(openHttp, { rate: s.victimRate, seconds: 1, cap: 2000 }, balance, undefined, 200);
  const alone = await atRate();
  const lists = closedLoop(http, s.listClients, s.seconds + 1, heavyList(lister, s.charges), 200);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const victim = await atRate();
  return { settings: s, alone, victim, lists: await lists };
}
