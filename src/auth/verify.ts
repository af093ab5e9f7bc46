/**
 * Bearer-token verification with express-jwt (+ jwks-rsa for `jwks` and `oidc`). Only the
 * provider's algorithms are accepted; `exp` and `sub` are required; every failure is a 401.
 */
import crypto from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { expressjwt, type GetVerificationKey } from 'express-jwt';
import jwksRsa from 'jwks-rsa';
import type jwt from 'jsonwebtoken';
import type { Config } from '../config';
import { ApiError } from '../http/errors';
import { readClaim } from '../tenancy/resolve';
import { LOCAL_ISSUER, type LocalKeys } from './local-keys';

/** The verified caller of a request. */
export interface Caller {
  readonly issuer: string;
  readonly subject: string;
  readonly email: string | null;
  readonly emailVerified: boolean | null;
  readonly name: string | null;
  readonly isPlatformAdmin: boolean;
  readonly claims: Readonly<Record<string, unknown>>;
}

const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'] as const;
/** Issuer recorded for HS256 tokens that carry no `iss`. */
export const HS256_DEFAULT_ISSUER = 'urn:tenant-service:hs256';

export interface Authenticator {
  /** Verifies the bearer token and sets `res.locals.caller`; 401 ApiError otherwise. */
  readonly middleware: RequestHandler;
}

/** Builds the token verifier of the configured provider. */
export function createAuthenticator(config: Config, localKeys: LocalKeys | null): Authenticator {
  let secret: GetVerificationKey | jwt.Secret;
  let algorithms: string[];
  let issuer: string | undefined = config.jwtIssuer ?? undefined;
  let defaultIssuer: string;

  switch (config.authProvider) {
    case 'local': {
      if (!localKeys) throw new Error('local auth provider needs the local signing key');
      // A KeyObject, not a PEM string: jsonwebtoken would parse a string on every request.
      secret = localKeys.publicKey;
      algorithms = ['RS256'];
      issuer ??= LOCAL_ISSUER;
      defaultIssuer = LOCAL_ISSUER;
      break;
    }
    case 'jwt':
      secret = crypto.createSecretKey(Buffer.from(config.jwtSecret!, 'utf8'));
      algorithms = ['HS256'];
      defaultIssuer = HS256_DEFAULT_ISSUER;
      break;
    case 'jwks':
      secret = jwksSecret(config.jwksUri!);
      algorithms = [...ASYMMETRIC];
      defaultIssuer = config.jwksUri!;
      break;
    case 'oidc': {
      secret = oidcSecret(config.oidcIssuer!);
      algorithms = [...ASYMMETRIC];
      issuer ??= config.oidcIssuer!;
      defaultIssuer = config.oidcIssuer!;
      break;
    }
  }

  const verify = expressjwt({
    secret,
    algorithms: algorithms as never,
    issuer,
    audience: config.jwtAudience ?? undefined,
    requestProperty: 'auth',
    credentialsRequired: true,
    clockTolerance: 30,
    getToken: bearerToken,
  });

  const middleware: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    verify(req, res, (err?: unknown) => {
      if (err) return next(toUnauthorized(err));
      const claims = ((req as Request & { auth?: Record<string, unknown> }).auth ?? {}) as Record<string, unknown>;
      if (typeof claims.exp !== 'number') return next(new ApiError('unauthorized', 'The token has no expiry (exp).', {}, wwwAuth('invalid_token', 'missing exp')));
      if (typeof claims.sub !== 'string' || claims.sub === '') {
        return next(new ApiError('unauthorized', 'The token has no subject (sub).', {}, wwwAuth('invalid_token', 'missing sub')));
      }
      res.locals.caller = toCaller(claims, config, defaultIssuer);
      next();
    });
  };
  return { middleware };
}

function toCaller(claims: Record<string, unknown>, config: Config, defaultIssuer: string): Caller {
  const roles = readClaim(claims, config.adminRoleClaim);
  const isPlatformAdmin = Array.isArray(roles) ? roles.includes(config.adminRole) : roles === config.adminRole;
  const ev = claims.email_verified;
  return Object.freeze({
    issuer: typeof claims.iss === 'string' && claims.iss !== '' ? claims.iss : defaultIssuer,
    subject: claims.sub as string,
    email: typeof claims.email === 'string' ? claims.email : null,
    emailVerified: typeof ev === 'boolean' ? ev : ev === 'true' ? true : ev === 'false' ? false : null,
    name: typeof claims.name === 'string' ? claims.name : null,
    isPlatformAdmin,
    claims: Object.freeze({ ...claims }),
  });
}

/** `Authorization: Bearer <token>`, case-insensitive scheme; anything else is no token. */
function bearerToken(req: Request): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(h);
  if (!m) throw Object.assign(new Error('The Authorization header must be "Bearer <token>".'), { code: 'credentials_bad_format' });
  return m[1];
}

function wwwAuth(error: string, description: string): Record<string, string> {
  return { 'WWW-Authenticate': `Bearer realm="tenant-service", error="${error}", error_description="${description}"` };
}

/** Every verification failure, including key-server trouble, is a 401 that reveals nothing. */
function toUnauthorized(err: unknown): ApiError {
  const e = err as { code?: string; name?: string; inner?: { name?: string; message?: string } };
  if (e.code === 'credentials_required') {
    return new ApiError('unauthorized', 'A bearer token is required: send "Authorization: Bearer <token>".', {}, {
      'WWW-Authenticate': 'Bearer realm="tenant-service"',
    });
  }
  if (e.code === 'credentials_bad_format' || e.code === 'credentials_bad_scheme') {
    return new ApiError('unauthorized', 'The Authorization header must be "Bearer <token>".', {}, wwwAuth('invalid_request', 'malformed authorization header'));
  }
  const inner = e.inner?.name ?? e.name;
  const reason =
    inner === 'TokenExpiredError'
      ? 'The token has expired.'
      : inner === 'NotBeforeError'
        ? 'The token is not valid yet.'
        : inner === 'JwksRateLimitError' || inner === 'SigningKeyNotFoundError' || inner === 'JwksError'
          ? 'The token was signed by an unknown key.'
          : /audience/.test(e.inner?.message ?? '')
            ? 'The token is for another audience.'
            : /issuer/.test(e.inner?.message ?? '')
              ? 'The token is from another issuer.'
              : 'The token is invalid.';
  return new ApiError('unauthorized', reason, {}, wwwAuth('invalid_token', reason.replace(/\.$/, '').toLowerCase()));
}

function jwksSecret(jwksUri: string): GetVerificationKey {
  // Keys are cached; unknown key ids are rate limited so a flood cannot hammer the key server.
  const fromJwks = jwksRsa.expressJwtSecret({
    jwksUri,
    cache: true,
    cacheMaxEntries: 16,
    cacheMaxAge: 10 * 60_000,
    rateLimit: true,
    jwksRequestsPerMinute: 10,
    timeout: 5_000,
  }) as GetVerificationKey;
  // jwks-rsa hands back PEM strings; parse each key once, not on every request.
  const parsed = new Map<string, crypto.KeyObject>();
  return async (req, token) => {
    const pem = await fromJwks(req, token);
    if (typeof pem !== 'string') return pem;
    let key = parsed.get(pem);
    if (!key) {
      key = crypto.createPublicKey(pem);
      if (parsed.size >= 64) parsed.clear();
      parsed.set(pem, key);
    }
    return key;
  };
}

function oidcSecret(issuer: string): GetVerificationKey {
  let resolved: GetVerificationKey | null = null;
  let pending: Promise<GetVerificationKey> | null = null;
  const discover = async (): Promise<GetVerificationKey> => {
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`OIDC discovery failed with HTTP ${res.status}`);
    const doc = (await res.json()) as { jwks_uri?: unknown };
    if (typeof doc.jwks_uri !== 'string') throw new Error('OIDC discovery document has no jwks_uri');
    return jwksSecret(doc.jwks_uri);
  };
  return async (req, token) => {
    if (!resolved) {
      pending ??= discover().finally(() => {
        pending = null;
      });
      resolved = await pending.catch((err: unknown) => {
        throw Object.assign(new Error('The identity provider could not be reached.'), { name: 'JwksError', cause: err });
      });
    }
    return resolved(req, token);
  };
}
