/**
 * Configuration: the only module that reads process.env. Parsed once at boot into a frozen,
 * typed Config, one reader per section (docs/configuration.md); every bad variable of every
 * section is reported in one message.
 */
import { readAuthConfig, type AuthConfig } from './identity';
import { readDatabaseConfig, type DatabaseConfig } from './database';
import { readDecisionsConfig, type DecisionsConfig } from './decisions';
import { readDomainsConfig, type DomainsConfig } from './domains';
import { EnvReader, type Env } from './env-reader';
import { readEventsConfig, type EventsConfig } from './events';
import { readMailConfig, type MailConfig } from './smtp';
import { readRateLimitConfig, type RateLimitConfig } from './rate-limits';
import { readServiceConfig, type ServiceConfig } from './service';
import { readTenantsConfig, type TenantsConfig } from './tenants';

export type { AuthProvider } from './auth-provider';
export type { LogLevel } from './service';
export { redactUrl } from './env-reader';

export type Config = ServiceConfig & TenantsConfig & AuthConfig & DatabaseConfig & RateLimitConfig & DecisionsConfig & EventsConfig & MailConfig & DomainsConfig;

/** Thrown when one or more variables are invalid; the message names each of them. */
/**
 * Where clients reach this service, without a trailing slash: SERVICE_PUBLIC_URL, else the
 * service's own URL (the tenant-token issuer). The base of the SCIM URL, the OpenID provider's
 * issuer and the SSO URLs given to identity providers.
 */
export function serviceBaseUrl(config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer'>): string {
  return (config.publicUrl ?? config.tenantTokenIssuer).replace(/\/+$/, '');
}

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment (default: process.env) into a Config, or throws one ConfigError. */
export function loadConfig(env: Env = process.env): Config {
  const reader = new EnvReader(env);
  const service = readServiceConfig(reader);
  const tenants = readTenantsConfig(reader);
  const auth = readAuthConfig(reader);
  const database = readDatabaseConfig(reader);
  const rateLimits = readRateLimitConfig(reader);
  const decisions = readDecisionsConfig(reader, service, auth);
  const events = readEventsConfig(reader);
  const mail = readMailConfig(reader);
  const domains = readDomainsConfig(reader);
  if (reader.problems.length) throw new ConfigError(reader.problems);
  return Object.freeze({ ...service, ...tenants, ...auth, ...database, ...rateLimits, ...decisions, ...events, ...mail, ...domains });
}
