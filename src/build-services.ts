/**
 * Builds the AppServices of a process (or a test) from its Config and an open pool.
 */
import type { Logger } from 'pino';
import { loadOrCreateLocalKeys } from './auth/local-keys';
import type { Config } from './config';
import type { Database } from './db/tenant-scope';
import { createMetrics } from './http/metrics';
import { createRateLimiter } from './http/rate-limit';
import type { AppServices } from './context/app-services';
import { createMailer } from './mail/invitation-mail';

export interface BuildServicesOptions {
  db: Database;
  logger: Logger;
  embeddedDatabase?: boolean;
}

/** Loads the local signing key (local provider) and builds the rate limiter. */
export async function buildServices(config: Config, opts: BuildServicesOptions): Promise<AppServices> {
  const localKeys = config.authProvider === 'local' ? loadOrCreateLocalKeys(config.dataDir) : null;
  const rateLimiter = config.rateLimitEnabled ? await createRateLimiter(config, opts.logger) : null;
  return {
    db: opts.db,
    logger: opts.logger,
    localKeys,
    rateLimiter,
    embeddedDatabase: opts.embeddedDatabase ?? false,
    mailer: createMailer(config.smtpUrl, config.mailFrom),
    metrics: createMetrics({ db: opts.db }),
  };
}

/** Closes what buildServices opened (not the pool, which the caller owns). */
export async function closeServices(services: AppServices): Promise<void> {
  await services.rateLimiter?.close();
  services.mailer.close();
}
