/**
 * The transaction of a tenant request (BEGIN, app_enter_tenant, the handler's statements,
 * COMMIT) on one pooled connection, driven through pg directly instead of knex's transaction
 * machinery. Measured on this project's 2-core machine, knex's `transaction()` (a Transaction
 * object, an event emitter, a new knex instance, BEGIN and COMMIT through its query runner)
 * costs 100–200 µs of CPU per request on top of the same statements sent by pg: about a tenth of
 * what a whole GET /api/boards costs.
 *
 * The handler still gets a knex `Transaction` for its Objection models and named queries: a
 * knex instance bound to this connection (what knex builds for its own transactions, without
 * the BEGIN/COMMIT bookkeeping), which refuses any statement once the transaction has ended, so
 * a stray promise can never run a statement on a connection that is back in the pool. Nested
 * transactions on it (`withSavepoint`) are SAVEPOINTs, as with knex's own.
 *
 * `queryRows` runs plain SQL on a transaction's connection, skipping the query builder: for the
 * named queries of hot read paths (the boards page), as prepared statements where the
 * connection keeps them (`preparedName`).
 */
import type { Knex } from 'knex';
import makeKnex from 'knex/lib/knex-builder/make-knex';

/** A pooled pg connection, as knex's pool hands it out. */
export interface PgConnection {
  query(config: { name?: string; text: string; values?: readonly unknown[] }, callback: (err: Error | null, result: { rows: unknown[] }) => void): void;
  /** knex destroys a connection carrying this mark when it is released. */
  __knex__disposed?: unknown;
}

interface KnexPgClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

const ENDED = Symbol('tenant-service.transaction-ended');

type BoundTransaction = Knex.Transaction & { [ENDED]: () => boolean; __connection: PgConnection };

/**
 * Runs one statement on a connection (the callback form, so the pool's read-timeout guard sees
 * it). With `name`, a named prepared statement: parsed once per connection (pg remembers which
 * connections have it), then only bound and executed.
 */
export function runStatement<R>(connection: PgConnection, text: string, values?: readonly unknown[], name?: string): Promise<R[]> {
  const config = name !== undefined ? { name, text, values } : values === undefined ? { text } : { text, values };
  return new Promise((resolve, reject) => {
    connection.query(config, (err, result) => (err ? reject(err) : resolve(result.rows as R[])));
  });
}

/**
 * The name to prepare a hot statement under, or undefined where statements are not prepared
 * (`preparedStatements: false` in openDatabase: behind a transaction pooler that does not keep
 * them, such as PgBouncer before 1.21 in transaction mode).
 */
export function preparedName(k: Knex | Knex.Transaction, name: string): string | undefined {
  return (k.client as { config?: { preparedStatements?: boolean } }).config?.preparedStatements === true ? name : undefined;
}

function endedError(): Error {
  return new Error('The request transaction has already ended; no statement may run on it.');
}

/** A knex instance whose every query runs on `connection`, refused once `ended()` says so. */
function bindKnex(db: Knex, connection: PgConnection, ended: () => boolean): BoundTransaction {
  const client = db.client as Knex.Client & Record<string, unknown>;
  // What knex's makeTxClient does for its own transactions (knex/lib/execution/transaction.js).
  const trxClient = Object.create(Object.getPrototypeOf(client) as object) as Record<string, unknown>;
  for (const key of ['version', 'config', 'driver', 'connectionSettings', 'valueForUndefined', 'logger']) trxClient[key] = client[key];
  trxClient.transacting = true;
  const query = client.query as (this: unknown, conn: unknown, obj: unknown) => Promise<unknown>;
  trxClient.query = function (this: unknown, conn: unknown, obj: unknown) {
    if (ended()) return Promise.reject(endedError());
    if (conn !== connection) return Promise.reject(new Error('Invalid connection for transaction query.'));
    return query.call(this, conn, obj);
  };
  trxClient.stream = () => {
    throw new Error('Streaming queries are not supported in a request transaction.');
  };
  trxClient.acquireConnection = () => (ended() ? Promise.reject(endedError()) : Promise.resolve(connection));
  trxClient.releaseConnection = () => Promise.resolve();
  const trx = makeKnex(trxClient as unknown as Knex.Client) as unknown as Record<string | symbol, unknown>;
  trx.isTransaction = true;
  trx.userParams = {};
  // Objection recognises a transaction by commit/rollback; the pipeline ends this one itself.
  trx.commit = () => Promise.reject(new Error('The request transaction is committed by the pipeline.'));
  trx.rollback = () => Promise.reject(new Error('The request transaction is rolled back by the pipeline (throw instead).'));
  trx.isCompleted = ended;
  trx[ENDED] = ended;
  trx.__connection = connection;
  return trx as unknown as BoundTransaction;
}

/**
 * Runs `first` (the statement that enters the tenant) and then `fn` in one transaction on a
 * pooled connection; commits when `fn` resolves, rolls back when anything throws. A connection
 * whose ROLLBACK fails is destroyed rather than returned to the pool.
 */
export async function withRequestTransaction<F, T>(
  db: Knex,
  first: (connection: PgConnection) => Promise<F>,
  fn: (firstResult: F, trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  const client = db.client as unknown as KnexPgClient;
  const connection = await client.acquireConnection();
  let ended = false;
  try {
    await runStatement(connection, 'BEGIN');
    try {
      const result = await fn(await first(connection), bindKnex(db, connection, () => ended));
      ended = true;
      await runStatement(connection, 'COMMIT');
      return result;
    } catch (err) {
      ended = true;
      await runStatement(connection, 'ROLLBACK').catch((rollbackError: unknown) => {
        connection.__knex__disposed = rollbackError ?? 'ROLLBACK failed';
      });
      throw err;
    }
  } finally {
    ended = true;
    await client.releaseConnection(connection);
  }
}

/**
 * Plain SQL (`$1` placeholders) on the connection of a transaction, without the query builder.
 * Only for a transaction (a knex one or a request transaction), never for the pool.
 */
export async function queryRows<R>(trx: Knex.Transaction, text: string, values: readonly unknown[], name?: string): Promise<R[]> {
  const statement = name === undefined ? undefined : preparedName(trx, name);
  const bound = trx as unknown as Partial<BoundTransaction>;
  if (bound[ENDED]) {
    if (bound[ENDED]()) throw endedError();
    return runStatement<R>(bound.__connection!, text, values, statement);
  }
  if (!trx.isTransaction || trx.isCompleted()) throw new Error('queryRows needs an open transaction.');
  // A knex transaction's client hands out the transaction's own connection.
  const connection = await (trx.client as unknown as KnexPgClient).acquireConnection();
  return runStatement<R>(connection, text, values, statement);
}
