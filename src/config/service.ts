/** The process itself: where it listens, what it logs, which proxies it trusts, /metrics and GraphQL paths. */
import { parseTrustProxy, type TrustProxy } from '../trust-proxy';
import type { EnvReader } from './env-reader';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface ServiceConfig {
  readonly port: number;
  readonly host: string;
  readonly logLevel: LogLevel;
  /** SERVICE_TRUST_PROXY: the proxies whose X-Forwarded-For entries count (src/trust-proxy.ts). */
  readonly trustProxy: TrustProxy;
  readonly graphqlPath: string;
  /** When set, GET /metrics requires `Authorization: Bearer <this token>`. */
  readonly metricsToken: string | null;
  /** SERVICE_PUBLIC_URL: where clients reach this service (the SCIM base URL shown to tenant admins); null: the tenant token issuer. */
  readonly publicUrl: string | null;
  /**
   * SERVICE_REQUEST_TIMEOUT_MS: how long a client may take to send a whole request (headers and
   * body); a slower one is cut off (408). Once the body has arrived, the answer may take longer.
   */
  readonly requestTimeoutMs: number;
}

export function readServiceConfig(env: EnvReader): ServiceConfig {
  const port = env.int('SERVICE_PORT', 0, 65535) ?? 8080;
  const host = env.str('SERVICE_HOST') ?? '127.0.0.1';

  const debug = env.bool('SERVICE_DEBUG', false);
  let logLevel: LogLevel = debug ? 'debug' : 'info';
  const lvl = env.text('SERVICE_LOG_LEVEL');
  if (lvl !== undefined) {
    const lower = lvl.toLowerCase() as LogLevel;
    if (LOG_LEVELS.includes(lower)) logLevel = lower;
    else env.problems.push(`SERVICE_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got '${lvl}'`);
  }

  const trust = parseTrustProxy(env.text('SERVICE_TRUST_PROXY'));
  if ('problem' in trust) env.problems.push(`SERVICE_TRUST_PROXY: ${trust.problem}`);
  const trustProxy = 'value' in trust ? trust.value : false;
  const graphqlPath = env.str('SERVICE_GRAPHQL_PATH') ?? '/graphql';
  if (!graphqlPath.startsWith('/')) env.problems.push(`SERVICE_GRAPHQL_PATH: must start with '/', got '${graphqlPath}'`);
  const metricsToken = env.str('SERVICE_METRICS_TOKEN');
  if (metricsToken !== null && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    env.problems.push('SERVICE_METRICS_TOKEN: must be at least 16 characters without white space');
  }
  const publicUrl = env.url('SERVICE_PUBLIC_URL', ['http:', 'https:']);
  const requestTimeoutMs = env.int('SERVICE_REQUEST_TIMEOUT_MS', 100, 3_600_000) ?? 60_000;
  return { port, host, logLevel, trustProxy, graphqlPath, metricsToken, publicUrl, requestTimeoutMs };
}
