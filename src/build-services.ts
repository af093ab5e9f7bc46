/**
 * Builds the AppServices of a process (or a test) from its Config and an open pool.
 */
import { noPlatformAdminReason } from './admin-issuers';
import type { Logger } from 'pino';
import { loadOrCreateLocalKeys } from './auth/local-keys';
import { TenantTokenKeys, type TenantTokenKeyOptions } from './domain/tenant-tokens';
import type { Config } from './config';
import type { Database } from './db/tenant-scope';
import { createMetrics } from './http/metrics';
import { createRateLimiter } from './http/rate-limit';
import type { AppServices } from './context/app-services';
import { downgradeRefusal, encryptPlainClientSecrets, encryptPlainWebhookSecrets, missingEncryptionSecret } from './domain/secrets-at-rest';
import { createMailer } from './mail/invitation-mail';
import { registerConsoleClientAtBoot } from './domain/sign-in/console-client';
import { startDecisionMemory } from './tenancy/decision-memory';

export interface BuildServicesOptions {
  db: Database;
  logger: Logger;
  embeddedDatabase?: boolean;
  /** The runtime database URL (the embedded one when SERVICE_DATABASE_URL is unset): the listener's default. */
  databaseUrl?: string;
  /** Internal timing of the tenant-token key set (tests shorten it). */
  tenantTokenKeys?: TenantTokenKeyOptions;
}

/** Loads the local signing key (local provider), builds the rate limiter, and checks the secrets at rest. */
export async function buildServices(config: Config, opts: BuildServicesOptions): Promise<AppServices> {
  await checkSecretsAtRest(config, opts.db, opts.logger);
  await registerConsoleClientAtBoot(opts.db, config, opts.logger);
  const localKeys = config.authProvider === 'local' ? loadOrCreateLocalKeys(config.dataDir) : null;
  // Said at every boot: a deployment where nobody can reach /api/setup is rarely meant.
  const noAdmin = noPlatformAdminReason(config);
  if (noAdmin) opts.logger.warn({ admin_issuers: config.adminIssuers }, noAdmin);
  const rateLimiter = config.rateLimitEnabled ? await createRateLimiter(config, opts.logger) : null;
  const metrics = createMetrics({ db: opts.db });
  const url = opts.databaseUrl ?? config.databaseUrl;
  const decisionMemory = url ? startDecisionMemory(config, url, opts.logger, metrics.factsMemoryObserver) : undefined;
  return {
    db: opts.db,
    logger: opts.logger,
    localKeys,
    tenantTokenKeys: new TenantTokenKeys(opts.db, config, opts.logger, opts.tenantTokenKeys),
    rateLimiter,
    embeddedDatabase: opts.embeddedDatabase ?? false,
    mailer: createMailer(config.smtpUrl, config.mailFrom),
    metrics,
    decisionMemory,
  };
}

/**
 * With SERVICE_KEY_ENCRYPTION_SECRET, encrypts the webhook and client secrets still stored in plain text;
 * without it, says at boot (an error line) that the database holds secrets encrypted with it,
 * which this instance will refuse to write beside (docs/security.md#secrets-at-rest).
 */
async function checkSecretsAtRest(config: Config, db: Database, logger: Logger): Promise<void> {
  try {
    if (config.keyEncryptionSecret !== null) {
      const encrypted = await encryptPlainWebhookSecrets(db, config.keyEncryptionSecret);
      if (encrypted > 0) logger.info({ count: encrypted }, 'Webhook secrets stored in plain text were encrypted with SERVICE_KEY_ENCRYPTION_SECRET');
      const clients = await encryptPlainClientSecrets(db, config.keyEncryptionSecret);
      if (clients > 0) logger.info({ count: clients }, 'Client secrets stored in plain text were encrypted with SERVICE_KEY_ENCRYPTION_SECRET');
    } else if (await missingEncryptionSecret(db, null)) {
      logger.error(
        { reason: downgradeRefusal('sign tenant tokens, rotate their keys, create webhook endpoints or register confidential clients') },
        'SERVICE_KEY_ENCRYPTION_SECRET is not set but the database holds secrets encrypted with it',
      );
    }
  } catch (err) {
    // The refusals happen at each write anyway; an unreachable database is the readiness probe's to report.
    logger.error({ err }, 'Secrets at rest could not be checked at boot; the next boot tries again');
  }
}

/** Closes what buildServices opened (not the pool, which the caller owns). */
export async function closeServices(services: AppServices): Promise<void> {
  await services.rateLimiter?.close();
  await services.decisionMemory?.close();
  services.mailer.close();
}
