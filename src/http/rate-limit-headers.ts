/**
 * The rate-limit headers of a counted response (docs/operations.md#rate-limits): the legacy
 * `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` and the IETF draft-8
 * `RateLimit` and `RateLimit-Policy`, exactly as express-rate-limit's `legacyHeaders: true` and
 * `standardHeaders: 'draft-8'` write them, from the count it leaves in `req.rateLimit`.
 *
 * Written here because the library's own writer hashes the counter key (SHA-256, for the
 * policy's `pk`) and formats every string again on every request: on the gateway decision, which
 * answers from memory, that was a large share of the limits' cost. Here the constant parts are
 * made once per counter and the partition key once per key. (The library also set `Date` again;
 * Node's own `Date` header says the same.)
 */
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import type { RateLimitInfo } from 'express-rate-limit';

/** Partition keys remembered per counter; past this many the memo starts again (a flood of addresses stays bounded). */
const PARTITION_KEYS_KEPT = 10_000;

/** express-rate-limit's draft-8 partition key: the base64 of the first 12 hex digits of the key's SHA-256. */
export function partitionKey(key: string): string {
  return Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
}

export interface RateLimitHeaders {
  /** Sets the headers of `info` on `res` (unless it has sent its headers); returns the seconds until the window resets. */
  set(res: Response, info: RateLimitInfo): number;
}

/** The header writer of one counter (its policy name, limit and window; the limit is a number, never per request). */
export function rateLimitHeaders(name: string, limit: number, windowMs: number): RateLimitHeaders {
  const windowSeconds = Math.ceil(windowMs / 1000);
  const policyHead = `"${name}"; q=${limit}; w=${windowSeconds}; pk=:`;
  const countHead = `"${name}"; r=`;
  const limitText = String(limit);
  const partitions = new Map<string, string>();
  const policyOf = (key: string): string => {
    let policy = partitions.get(key);
    if (policy === undefined) {
      if (partitions.size >= PARTITION_KEYS_KEPT) partitions.clear();
      policy = `${policyHead}${partitionKey(key)}:`;
      partitions.set(key, policy);
    }
    return policy;
  };
  return {
    set(res, info) {
      const reset = info.resetTime;
      const resetSeconds = reset ? Math.max(0, Math.ceil((reset.getTime() - Date.now()) / 1000)) : windowSeconds;
      if (res.headersSent) return resetSeconds;
      res.setHeader('X-RateLimit-Limit', limitText);
      res.setHeader('X-RateLimit-Remaining', String(info.remaining));
      if (reset instanceof Date) res.setHeader('X-RateLimit-Reset', String(Math.ceil(reset.getTime() / 1000)));
      res.setHeader('RateLimit', `${countHead}${info.remaining}; t=${resetSeconds}`);
      res.setHeader('RateLimit-Policy', policyOf(info.key));
      return resetSeconds;
    },
  };
}
