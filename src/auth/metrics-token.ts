/**
 * The bearer token of GET /metrics (SERVICE_METRICS_TOKEN), apart from the callers' tokens.
 */
import crypto from 'node:crypto';

/**
 * The bearer check of GET /metrics when SERVICE_METRICS_TOKEN is set: constant-time comparison
 * of SHA-256 digests (equal lengths whatever the input, so the length does not leak either).
 */
export function metricsTokenMatches(expected: string, authorization: string | undefined): boolean {
  const m = typeof authorization === 'string' ? /^Bearer ([^\s]+)$/i.exec(authorization.trim()) : null;
  const given = crypto.createHash('sha256').update(m ? m[1]! : '').digest();
  const wanted = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(given, wanted) && m !== null;
}
