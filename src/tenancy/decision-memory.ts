/**
 * Whether this instance answers decisions from memory, and the parts that make it safe
 * (docs/architecture.md "Decisions from memory"): the facts held (./facts-memory) and the
 * listener that drops them on every committed change (src/db/fact-notifications.ts).
 */
import type { Logger } from 'pino';
import type { Config } from '../config';
import { startFactListener, type FactListener } from '../db/fact-notifications';
import type { TenantFactsQuery } from '../db/queries/enter-tenant';
import type { TenantEntryFacts } from '../context/entities';
import { FactsMemory, type FactsMemoryMode, type FactsMemoryObserver } from './facts-memory';

export interface DecisionMemory {
  readonly mode: FactsMemoryMode;
  /** Null when memory decisions are off (`mode`). */
  readonly facts: FactsMemory<TenantEntryFacts> | null;
  /** The listener connection's backend pid, null when not connected or off. */
  backendPid(): number | null;
  /**
   * After a request that may have written (`scope`: the tenant its transaction could write, `*`
   * for a platform operation): returns once this instance has dropped what that request
   * committed, so its next request reads its own write. It waits for the listener to have
   * delivered every change committed so far (one round trip shared by the writes waiting), so
   * only committed changes drop facts, and only the tenants they changed; a refused request, or
   * one that changed no fact, drops nothing. When that cannot be shown (the listener is not
   * listening), `scope` is dropped instead.
   */
  afterWrite(scope: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * Off with SERVICE_DECISION_CACHE_ENTRIES=0, and when the database URL is known to go through a
 * transaction pooler (prepared statements turned off, or a separate migration URL) without a
 * SERVICE_DATABASE_LISTEN_URL: LISTEN needs a session connection.
 */
export function decisionMemoryMode(config: Config): FactsMemoryMode {
  if (config.decisionCacheEntries === 0 || !config.databaseUrl) return config.decisionCacheEntries === 0 ? 'disabled' : 'on';
  const pooled = !config.databasePreparedStatements || (config.migrationDatabaseUrl !== null && config.migrationDatabaseUrl !== config.databaseUrl);
  return pooled && !config.databaseListenUrl ? 'pooler_without_listen_url' : 'on';
}

/** Starts the memory and its listener on `url` (the runtime database URL unless SERVICE_DATABASE_LISTEN_URL). */
export function startDecisionMemory(config: Config, url: string, logger: Logger, observer: FactsMemoryObserver = {}): DecisionMemory {
  const mode = decisionMemoryMode(config);
  if (mode !== 'on') {
    logger.info({ reason: mode }, 'Decisions are answered from the database, not from memory');
    return { mode, facts: null, backendPid: () => null, afterWrite: async () => undefined, close: async () => undefined };
  }
  const facts = new FactsMemory<TenantEntryFacts>(config.decisionCacheEntries, observer);
  const listener: FactListener = startFactListener({
    url: config.databaseListenUrl ?? url,
    logger,
    sink: { state: (s, fresh) => facts.listenerState(s, fresh), changed: (t, at) => facts.changed(t, at) },
  });
  const afterWrite = async (scope: string) => {
    if (!(await listener.sync())) facts.forget(scope);
  };
  return { mode, facts, backendPid: () => listener.backendPid(), afterWrite, close: () => listener.stop() };
}

/** The memory key of a facts statement: exactly its arguments, in its order of precedence. */
export function factsKey(q: TenantFactsQuery): string {
  // The token's role keys pick which roles' permissions the row carries: they are part of the key.
  // So is the verified email's key: it finds the directory user a member is bound to (migration 019),
  // and its domains: they find the verified domain, and with `byDomain` the tenant (migration 024).
  const who = `\u0000${q.issuer}\u0000${q.subject}\u0000${(q.roles ?? []).join(',')}\u0000${q.emailKey ?? ''}\u0000${(q.emailDomains ?? []).join(',')}\u0000${q.byDomain ? 'd' : ''}`;
  if (q.tenantId) return `i\u0000${q.tenantId}${who}`;
  if (q.slug !== null) return `s\u0000${q.slug}${who}`;
  if (q.link) return `l\u0000${q.link.issuer}\u0000${q.link.organizationId}${who}`;
  return `d${who}`;
}
