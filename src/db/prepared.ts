import type { CompiledQuery, KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/**
 * Named statements: `prepared('transfer_create_batch', query)` runs `query` (a `sql` template or
 * a query builder) as a named statement on PostgreSQL, parsed and planned once per connection and
 * then bound on every later call (node-postgres-dialect.ts). PGlite prepares nothing, but both
 * drivers refuse a name that two different texts claim, so a mistake fails the same way on both.
 * Why, and what was measured: docs/decisions/0016-prepared-hot-statements.md.
 */

/** Each name is a statement on every connection of a pool: the set of names is bounded. */
export const MAX_STATEMENT_NAMES = 256;
const NAME = /^[a-z][a-z0-9_]{0,62}$/;
/** Where `prepared` tags the root node of an execution, which the compiled query carries to the driver. */
const STATEMENT = Symbol('statement name');

/** One statement name and the text it was first run with. */
class StatementName implements KyselyPlugin {
  readonly name: string;
  text: string | undefined;

  constructor(name: string) {
    this.name = name;
  }

  /** Tags this execution's root node (a copy, so a builder run elsewhere without a name stays unnamed). */
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    return Object.freeze({ ...node, [STATEMENT]: this });
  }

  transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(result);
  }
}

const names = new Map<string, StatementName>();

/**
 * `query`, to be run as the statement `name`: lowercase letters, digits and underscores, chosen by
 * the caller, one name for one text (a query whose text varies needs a name per variant).
 */
export function prepared<Q extends { withPlugin(plugin: KyselyPlugin): Q }>(name: string, query: Q): Q {
  let statement = names.get(name);
  if (statement === undefined) {
    if (!NAME.test(name)) throw new Error(`statement name ${JSON.stringify(name)} is not 1-63 lowercase letters, digits and underscores`);
    if (names.size >= MAX_STATEMENT_NAMES) throw new Error(`statement name ${name} refused: there are already ${MAX_STATEMENT_NAMES} names`);
    statement = new StatementName(name);
    names.set(name, statement);
  }
  return query.withPlugin(statement);
}

/**
 * The name `prepared` gave this compiled query, or undefined. Refuses a name whose first text was
 * another: one connection cannot hold two statements under one name.
 */
export function statementNameOf(query: CompiledQuery): string | undefined {
  const statement = (query.query as { [STATEMENT]?: StatementName })[STATEMENT];
  if (statement === undefined) return undefined;
  if (statement.text === undefined) statement.text = query.sql;
  else if (statement.text !== query.sql) throw new StatementNameConflict(statement.name, statement.text, query.sql);
  return statement.name;
}

export class StatementNameConflict extends Error {
  override name = 'StatementNameConflict';
  constructor(statement: string, first: string, other: string) {
    super(`statement name ${statement} is taken by another text: first ${JSON.stringify(first.slice(0, 200))}, now ${JSON.stringify(other.slice(0, 200))}`);
  }
}
