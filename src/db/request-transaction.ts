/**
 * Every transaction of the service, on one pooled connection, through the public APIs of knex
 * and pg only: the connection comes from knex's pool (`client.acquireConnection()`), knex's own
 * `transaction()` runs on it (its config takes a `connection`), and a connection left in an
 * unknown state is closed with pg's `Client.end()` before it goes back, so knex's pool discards
 * it instead of handing it to the next request.
 *
 * The request transaction (BEGIN, the entering statement, the handler's statements, COMMIT) is
 * one of them. Its handler gets knex's transaction for its Objection models and named queries,
 * which knex refuses to run statements on once it has ended, so a stray promise can never run
 * one on a connection that is back in the pool; nested transactions on it (`withSavepoint`) are
 * SAVEPOINTs. Only the pipeline ends it: its `commit` and `rollback` refuse.
 *
 * `queryRows` runs plain SQL on a transaction's connection, skipping the query builder: for the
 * named queries of hot read paths (the boards page), as prepared statements where the
 * connection keeps them (`preparedName`).
 */
import type { Knex } from 'knex';

/** A pooled pg connection (a pg `Client`), as knex's pool hands it out. */
export interface PgConnection {
  query(
    config: { name?: string; text: string; values?: readonly unknown[]; query_timeout?: number },
    callback: (err: Error | null, result: PgResult & PgResult[]) => void,
  ): void;
  end(): Promise<void>;
}

/** One statement's result as pg reports it (an array of them for a message of several statements). */
export interface PgResult {
  readonly rows: unknown[];
  readonly rowCount: number | null;
}

/** What knex's public `Client` type declares for its pool (typed `any` there). */
interface PooledClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

/** Options of a transaction: knex's own (isolation level, read only). */
export interface RunTransactionOptions {
  readonly isolationLevel?: 'read committed' | 'repeatable read' | 'serializable';
  readonly readOnly?: boolean;
}

/** How long a broken connection may take to close before it goes back (already refusing queries). */
const CLOSE_WAIT_MS = 1_000;

/**
 * Runs one statement on a connection (the callback form, so pg's query timeout applies). With
 * `name`, a named prepared statement: parsed once per connection (pg remembers which
 * connections have it), then only bound and executed. `timeoutMs` overrides the pool's
 * client-side query timeout for this statement.
 */
export function runStatement<R>(connection: PgConnection, text: string, values?: readonly unknown[], name?: string, timeoutMs?: number): Promise<R[]> {
  const base = name !== undefined ? { name, text, values } : values === undefined ? { text } : { text, values };
  const config = timeoutMs === undefined ? base : { ...base, query_timeout: timeoutMs };
  return new Promise((resolve, reject) => {
    connection.query(config, (err, result) => (err ? reject(err) : resolve(result.rows as R[])));
  });
}

/**
 * Runs several statements sent as one simple-protocol message (no parameters: values are in the
 * text as quoted literals): one round trip, run by PostgreSQL as one implicit transaction.
 * Returns each statement's result in order.
 */
export function runStatements(connection: PgConnection, text: string): Promise<PgResult[]> {
  return new Promise((resolve, reject) => {
    connection.query({ text }, (err, result) => (err ? reject(err) : resolve(Array.isArray(result) ? result : [result])));
  });
}

/**
 * The name to prepare a hot statement under, or undefined where statements are not prepared
 * (`preparedStatements: false` in openDatabase: behind a transaction pooler that does not keep
 * them, such as PgBouncer before 1.21 in transaction mode).
 */
export function preparedName(k: Knex | Knex.Transaction, name: string): string | undefined {
  return (k.client.config as { preparedStatements?: boolean } | undefined)?.preparedStatements === true ? name : undefined;
}

/**
 * An error after which the connection's state is unknown: pg's client-side query timeout (the
 * statement may still run there) or a connection that failed. Server-reported errors carry a
 * SQLSTATE and leave the connection usable.
 */
function isConnectionFailure(err: unknown): boolean {
  const e = err as { message?: unknown; code?: unknown } | null;
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return false;
  return typeof e?.message === 'string' && /Query read timeout|Connection terminated|not queryable|ECONNRESET|EPIPE/.test(e.message);
}

/** Closes a connection (it refuses queries at once); knex's pool then discards it. */
async function closeConnection(connection: PgConnection): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([connection.end().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
  clearTimeout(timer);
}

/**
 * Runs `fn` with a pooled connection and gives it back; closes it first when `fn` reports it
 * broken (`markBroken`) or fails with a connection failure.
 */
export async function withConnection<T>(db: Knex, fn: (connection: PgConnection, markBroken: () => void) => Promise<T>): Promise<T> {
  const client = db.client as unknown as PooledClient;
  const connection = await client.acquireConnection();
  let broken = false;
  try {
    return await fn(connection, () => (broken = true));
  } catch (err) {
    if (isConnectionFailure(err)) broken = true;
    throw err;
  } finally {
    if (broken) await closeConnection(connection);
    await client.releaseConnection(connection);
  }
}

const NOTHING_THROWN = Symbol('nothing thrown');

/**
 * Runs `fn` in a knex transaction on a pooled connection: commit when it resolves, rollback when
 * it throws. When BEGIN, COMMIT or ROLLBACK itself fails (knex then rejects with that error, not
 * the one `fn` threw) the connection is closed rather than returned to the pool.
 */
export function runTransaction<T>(
  db: Knex,
  fn: (trx: Knex.Transaction, connection: PgConnection) => Promise<T>,
  opts: RunTransactionOptions = {},
): Promise<T> {
  return withConnection(db, async (connection, markBroken) => {
    let thrown: unknown = NOTHING_THROWN;
    try {
      return await db.transaction(
        async (trx) => {
          try {
            return await fn(trx, connection);
          } catch (err) {
            thrown = err;
            throw err;
          }
        },
        { ...opts, connection },
      );
    } catch (err) {
      if (err !== thrown) markBroken();
      throw err;
    }
  });
}

/**
 * A view of the request's transaction for the handler: every statement goes to knex's
 * transaction, but `commit` and `rollback` refuse, since the pipeline ends it.
 */
function pipelineOwned(trx: Knex.Transaction): Knex.Transaction {
  return new Proxy(trx, {
    get(target, key, receiver) {
      if (key === 'commit') return () => Promise.reject(new Error('The request transaction is committed by the pipeline.'));
      if (key === 'rollback') return () => Promise.reject(new Error('The request transaction is rolled back by the pipeline (throw instead).'));
      return Reflect.get(target, key, receiver);
    },
  });
}

/**
 * Runs `first` (the statement that enters the tenant) and then `fn` in one transaction on a
 * pooled connection; commits when `fn` resolves, rolls back when anything throws. A connection
 * whose ROLLBACK fails is closed rather than returned to the pool.
 */
export function withRequestTransaction<F, T>(
  db: Knex,
  first: (connection: PgConnection) => Promise<F>,
  fn: (firstResult: F, trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  return runTransaction(db, async (trx, connection) => fn(await first(connection), pipelineOwned(trx)));
}

/**
 * Plain SQL (`$1` placeholders) on the connection of a transaction, without the query builder.
 * Only for an open transaction, never for the pool.
 */
export async function queryRows<R>(trx: Knex.Transaction, text: string, values: readonly unknown[], name?: string): Promise<R[]> {
  if (!trx.isTransaction) throw new Error('queryRows needs an open transaction.');
  if (trx.isCompleted()) throw new Error('The transaction has already ended; no statement may run on it.');
  // A knex transaction's client hands out the transaction's own connection.
  const connection = await (trx.client as unknown as PooledClient).acquireConnection();
  if (trx.isCompleted()) throw new Error('The transaction has already ended; no statement may run on it.');
  return runStatement<R>(connection, text, values, name === undefined ? undefined : preparedName(trx, name));
}
