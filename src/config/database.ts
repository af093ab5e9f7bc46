/** PostgreSQL: the URLs (runtime, migrations, notifications), the embedded database's directory, and the pool's limits. */
import path from 'node:path';
import type { EnvReader } from './env-reader';

const POSTGRES = ['postgres:', 'postgresql:'];

export interface DatabaseConfig {
  readonly databaseUrl: string | null;
  /** Where migrations run (SERVICE_MIGRATION_DATABASE_URL); null: databaseUrl. A direct connection when databaseUrl is a transaction pooler. */
  readonly migrationDatabaseUrl: string | null;
  readonly dataDir: string;
  /** Prepare the hot statements once per connection (false behind a pooler that drops them). */
  readonly databasePreparedStatements: boolean;
  /** SERVICE_DATABASE_LISTEN_URL: a direct (session) connection for change notifications; null: databaseUrl. */
  readonly databaseListenUrl: string | null;
  /** SERVICE_DATABASE_QUERY_TIMEOUT_MS: how long a request waits for a pooled connection or a query's answer before its 503. */
  readonly databaseQueryTimeoutMs: number;
}

export function readDatabaseConfig(env: EnvReader): DatabaseConfig {
  const databaseUrl = env.url('SERVICE_DATABASE_URL', POSTGRES);
  const migrationDatabaseUrl = env.url('SERVICE_MIGRATION_DATABASE_URL', POSTGRES);
  if (migrationDatabaseUrl !== null && databaseUrl === null) env.problems.push('SERVICE_MIGRATION_DATABASE_URL: needs SERVICE_DATABASE_URL as well');
  const dataDir = path.resolve(env.str('SERVICE_DATA_DIR') ?? './.data');
  const databasePreparedStatements = env.bool('SERVICE_DATABASE_PREPARED_STATEMENTS', true);
  const databaseListenUrl = env.url('SERVICE_DATABASE_LISTEN_URL', POSTGRES);
  if (databaseListenUrl !== null && databaseUrl === null) env.problems.push('SERVICE_DATABASE_LISTEN_URL: needs SERVICE_DATABASE_URL as well');
  const databaseQueryTimeoutMs = env.int('SERVICE_DATABASE_QUERY_TIMEOUT_MS', 100, 600_000) ?? 5_000;
  return { databaseUrl, migrationDatabaseUrl, dataDir, databasePreparedStatements, databaseListenUrl, databaseQueryTimeoutMs };
}
