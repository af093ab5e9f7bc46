/**
 * The rate limits of the sign-in browser routes (docs/operations.md#rate-limits, docs/sign-in.md):
 * anonymous requests to the service's OpenID provider and to the SSO callbacks, counted per client
 * address with the same machinery and stores as the API's counters (./rate-limit.ts,
 * src/rate-limit/). They are not operations of openapi.yaml, so their counters are declared here:
 *
 * - `oidc-sign-in`: `/oidc/auth…` and `/oidc/interaction/…` (each authorization request stores an
 *   interaction), 300 per minute (SERVICE_RATE_LIMIT_SIGN_IN_PER_MINUTE);
 * - `oidc-token`: `/oidc/token…` (client secrets are checked there), 600 per minute
 *   (SERVICE_RATE_LIMIT_OIDC_TOKEN_PER_MINUTE);
 * - `sso`: `/sso/…` (OIDC callbacks, SAML ACS posts, SP metadata), 300 per minute
 *   (SERVICE_RATE_LIMIT_SIGN_IN_PER_MINUTE).
 *
 * Discovery and the provider's JWKS are never limited (polled by token verifiers). A refusal has
 * the protocol's shape: the token endpoint's JSON error `temporarily_unavailable`, a small HTML
 * page for the browser routes; both 429 with Retry-After, never the API's error body.
 */
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type AugmentedRequest, type Logger as RateLimitLogger, type Store } from 'express-rate-limit';
import type { Config } from '../config';
import { rateLimitHeaders } from './rate-limit-headers';
import { stateOf } from './request-state';

/** One counter of the sign-in routes; every one counts per client address over a minute. */
export interface SignInRateLimitRule {
  readonly name: 'oidc-sign-in' | 'oidc-token' | 'sso';
  readonly limit: number;
  /** How a refusal is answered: the token endpoint's JSON error, or an HTML page. */
  readonly answer: 'json' | 'html';
}

export const SIGN_IN_PER_MINUTE = 300;
export const OIDC_TOKEN_PER_MINUTE = 600;

export function signInRules(config: Pick<Config, 'rateLimitSignInPerMinute' | 'rateLimitOidcTokenPerMinute'>): readonly SignInRateLimitRule[] {
  const signIn = config.rateLimitSignInPerMinute ?? SIGN_IN_PER_MINUTE;
  return [
    { name: 'oidc-sign-in', limit: signIn, answer: 'html' },
    { name: 'oidc-token', limit: config.rateLimitOidcTokenPerMinute ?? OIDC_TOKEN_PER_MINUTE, answer: 'json' },
    { name: 'sso', limit: signIn, answer: 'html' },
  ];
}

/**
 * The counter of a path, or null. Compared in lower case: the provider's own router does not
 * care about case, so `/oidc/AUTH` must count like `/oidc/auth`.
 */
export function signInCounterFor(path: string): SignInRateLimitRule['name'] | null {
  const p = path.toLowerCase();
  const under = (prefix: string): boolean => p === prefix || p.startsWith(`${prefix}/`);
  if (p.startsWith('/sso/')) return 'sso';
  if (under('/oidc/token')) return 'oidc-token';
  if (under('/oidc/auth') || under('/oidc/interaction')) return 'oidc-sign-in';
  return null;
}

/** The client address's counter key (IPv6 clients per /56: rotating addresses in one subnet does not help). */
export function addressKey(req: Request): string {
  const ip = stateOf(req).clientIp(req);
  return ip ? `ip:${ipKeyGenerator(ip)}` : 'ip:unknown';
}

const WINDOW_MS = 60_000;

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function refusalPage(retryAfter: number): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Too many sign-in attempts</title></head>
<body><h1>Too many sign-in attempts</h1>
<p>Too many sign-in requests came from your network. Try again in ${escapeHtml(String(retryAfter))} seconds.</p></body></html>
`;
}

function limiterFor(rule: SignInRateLimitRule, store: Store, logger: RateLimitLogger): RequestHandler {
  const headers = rateLimitHeaders(rule.name, rule.limit, WINDOW_MS);
  const limiter = rateLimit({
    windowMs: WINDOW_MS,
    limit: rule.limit,
    identifier: rule.name,
    standardHeaders: false,
    legacyHeaders: false,
    keyGenerator: (req: Request) => addressKey(req),
    store,
    passOnStoreError: true,
    logger,
    handler: (req: Request, res: Response) => {
      const retryAfter = headers.set(res, (req as AugmentedRequest).rateLimit);
      res.setHeader('Retry-After', String(retryAfter));
      res.setHeader('Cache-Control', 'no-store');
      if (rule.answer === 'json') {
        res.status(429).json({ error: 'temporarily_unavailable', error_description: `Too many token requests from this address; retry in ${retryAfter} seconds.` });
        return;
      }
      res.setHeader('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'; base-uri 'none'");
      res.status(429).type('html').send(refusalPage(retryAfter));
    },
  });
  return (req, res, next) =>
    limiter(req, res, (err?: unknown) => {
      const info = (req as AugmentedRequest).rateLimit;
      if (err === undefined && info !== undefined) headers.set(res, info);
      next(err);
    });
}

/** The stage counting the sign-in routes; every other request goes on uncounted. */
export function signInRateLimitStage(rules: readonly SignInRateLimitRule[], makeStore: (counter: string) => Store, logger: RateLimitLogger): RequestHandler {
  const limiters = new Map(rules.map((r) => [r.name, limiterFor(r, makeStore(r.name), logger)] as const));
  return (req, res, next) => {
    const counter = signInCounterFor(req.path);
    const limiter = counter === null ? undefined : limiters.get(counter);
    if (!limiter) return next();
    return limiter(req, res, next);
  };
}
