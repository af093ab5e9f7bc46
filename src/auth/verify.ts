/**
 * Bearer-token verification with express-jwt (keys of `jwks` and `oidc` from src/auth/jwks-cache.ts).
 * Only the provider's algorithms are accepted; `exp` and a well-formed `sub` are required; `iat` may not lie
 * in the future, `sub` and `iss` are at most MAX_IDENTITY_CLAIM_BYTES, and a `crit` header is
 * refused (no JWS extension is understood here). Every failure is a 401, except that an
 * identity provider whose keys cannot be fetched is a 503 with Retry-After.
 */
import crypto from 'node:crypto';
import type { Request, Response } from 'express';
import { expressjwt, type GetVerificationKey } from 'express-jwt';
import { createLocalJWKSet, errors as joseErrors, jwtVerify, type JWK } from 'jose';
import type jwt from 'jsonwebtoken';
import type { Config } from '../config';
import { ApiError } from '../errors';
import { readClaim, type Caller } from '../context/claims';
import { createJwksCache, JwksUnavailableError, type JwksCacheOptions } from './jwks-cache';
import { LOCAL_ISSUER, type LocalKeys } from './local-keys';
import { isTenantTokenClaims } from '../domain/tenant-tokens';
import { VerifiedTokenCache } from './token-cache';


const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'] as const;
/** Issuer recorded for HS256 tokens that carry no `iss`. */
export const HS256_DEFAULT_ISSUER = 'urn:tenant-service:hs256';

/** Clock skew allowed on `exp`, `nbf` and `iat`, in seconds. */
export const CLOCK_TOLERANCE_S = 30;
/**
 * Upper bound of `sub` and `iss`, in UTF-8 bytes. Both are stored in the unique btree index
 * (tenant_id, issuer, subject): two claims of this size fit PostgreSQL's index row limit
 * (~2 700 bytes) with room to spare.
 */
export const MAX_IDENTITY_CLAIM_BYTES = 1024;

/** Internal tuning, for tests (the defaults are the production values). */
export interface AuthenticatorOptions {
  jwks?: JwksCacheOptions;
}

export interface Authenticator {
  /**
   * Verifies the request's bearer token: `done(null, caller)`, or `done(error)` with a 401
   * ApiError (or a 503 when the keys cannot be fetched).
   */
  readonly authenticate: (req: Request, res: Response, done: (err: unknown, caller?: Caller) => void) => void;
  /**
   * The caller of the request's bearer token when that exact token was verified before and is
   * still valid (the verified-token cache), without verifying anything; else null. Only for
   * choosing whose turn a request waits for (src/http/caller-turns.ts), never for access.
   */
  readonly knownCaller: (req: Pick<Request, 'headers'>) => Caller | null;
}

/** What the token cache needs of the verification keys (src/auth/jwks-cache.ts). */
interface KeySet {
  generation(): number;
  maintain(): void;
}
const FIXED_KEYS: KeySet = { generation: () => 0, maintain: () => undefined };

/** The service's own OpenID provider, as the verifier needs it (src/oidc's `Oidc`). */
export interface OwnProvider {
  readonly issuer: string;
  /** The audience of its access tokens. */
  readonly audience: string;
  /** The public keys it publishes now. */
  publicKeys(): Promise<Array<Record<string, unknown>>>;
}

/**
 * Builds the token verifier of the configured provider; with `ownProvider`, the access tokens of
 * the service's own OpenID provider are accepted too (docs/sign-in.md#tokens-it-issues).
 */
export function createAuthenticator(config: Config, localKeys: LocalKeys | null, opts: AuthenticatorOptions = {}, ownProvider?: OwnProvider): Authenticator {
  const own = ownProvider ? ownVerifier(ownProvider) : null;
  let secret: GetVerificationKey | jwt.Secret;
  let algorithms: string[];
  // The keys tokens are checked with: fixed for `local` and `jwt`, fetched for `jwks` and `oidc`.
  let keys: KeySet = FIXED_KEYS;
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
      ({ secret, keys } = jwksSecret(config.jwksUri!, opts.jwks));
      algorithms = [...ASYMMETRIC];
      defaultIssuer = config.jwksUri!;
      break;
    case 'oidc': {
      ({ secret, keys } = oidcSecret(config.oidcIssuer!, opts.jwks));
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
    clockTolerance: CLOCK_TOLERANCE_S,
    getToken: bearerToken,
  });

  const tokens = new VerifiedTokenCache(config.jwtCacheSize, CLOCK_TOLERANCE_S);
  const authenticate: Authenticator['authenticate'] = (req, res, next) => {
    const token = presentedToken(req);
    if (token !== null) {
      const known = tokens.get(token, keys.generation());
      if (known) {
        keys.maintain();
        return next(null, known);
      }
    }
    const generation = keys.generation();
    // RFC 7515 section 4.1.11: a recipient that does not understand every `crit` extension must
    // reject the token. This verifier understands none, so any `crit` is refused (before any key
    // is looked up).
    if (hasCritHeader(req)) return next(invalid('The token has a critical header parameter (crit) this service does not understand.'));
    // Checks every verified token's claims alike, whoever signed it, and answers `next`.
    const accept = (claims: Record<string, unknown>, callerIssuer: string) => {
      if (typeof claims.exp !== 'number') return next(new ApiError('unauthorized', 'The token has no expiry (exp).', {}, wwwAuth('invalid_token', 'missing exp')));
      if (typeof claims.sub !== 'string' || claims.sub === '') {
        return next(new ApiError('unauthorized', 'The token has no subject (sub).', {}, wwwAuth('invalid_token', 'missing sub')));
      }
      // The subject names the caller exactly: " alice " is not alice, and a header or log line
      // carrying it would be (docs/security.md#who-the-caller-is).
      if (!isWellFormedSubject(claims.sub)) {
        return next(invalid("The token's subject (sub) has surrounding white space or control characters."));
      }
      // jsonwebtoken does not check `iat`; a token issued in the future was minted by a broken
      // clock or to outlive its apparent lifetime.
      if (claims.iat !== undefined && (typeof claims.iat !== 'number' || claims.iat > Date.now() / 1000 + CLOCK_TOLERANCE_S)) {
        return next(invalid('The token was issued in the future (iat).'));
      }
      if (Buffer.byteLength(claims.sub, 'utf8') > MAX_IDENTITY_CLAIM_BYTES) {
        return next(invalid(`The token's subject (sub) is longer than ${MAX_IDENTITY_CLAIM_BYTES} bytes.`));
      }
      if (typeof claims.iss === 'string' && Buffer.byteLength(claims.iss, 'utf8') > MAX_IDENTITY_CLAIM_BYTES) {
        return next(invalid(`The token's issuer (iss) is longer than ${MAX_IDENTITY_CLAIM_BYTES} bytes.`));
      }
      // Whatever key set this provider trusts (it may be this service's own JWKS), a tenant token
      // is for the product, never a bearer token here.
      if (isTenantTokenClaims(claims, config)) return next(invalid('The token is a tenant token, meant for your product: call this service with the token of your identity provider.'));
      const caller = toCaller(claims, config, callerIssuer);
      if (token !== null) tokens.set(token, caller, claims.exp, generation);
      next(null, caller);
    };
    // The service's own OpenID provider's access tokens, whatever SERVICE_AUTH_PROVIDER is: its
    // keys, read in-process (src/oidc), its issuer and its API audience.
    if (own && ownProvider && token !== null && unverifiedIssuer(token) === ownProvider.issuer) {
      own.verify(token).then(
        (claims) => accept(claims, ownProvider.issuer),
        (err: unknown) => next(ownFailure(err)),
      );
      return;
    }
    verify(req, res, (err?: unknown) => {
      if (err) return next(toUnauthorized(err));
      accept(((req as Request & { auth?: Record<string, unknown> }).auth ?? {}) as Record<string, unknown>, defaultIssuer);
    });
  };
  const knownCaller: Authenticator['knownCaller'] = (req) => {
    const token = presentedToken(req);
    return token === null ? null : tokens.get(token, keys.generation());
  };
  return { authenticate, knownCaller };
}

/** The `iss` of a JWT's payload, unverified: only to choose which keys verify it. */
function unverifiedIssuer(token: string): string | null {
  const dot = token.indexOf('.');
  const end = token.indexOf('.', dot + 1);
  if (dot < 0 || end < 0 || end - dot > 16_384) return null;
  try {
    const payload = JSON.parse(Buffer.from(token.slice(dot + 1, end), 'base64url').toString('utf8')) as unknown;
    return payload !== null && typeof payload === 'object' && typeof (payload as { iss?: unknown }).iss === 'string' ? (payload as { iss: string }).iss : null;
  } catch {
    return null;
  }
}

/** Verifies an access token of the service's own provider: RS256, `typ: at+jwt`, its issuer and audience, `exp` and `sub`. */
function ownVerifier(p: OwnProvider): { verify(token: string): Promise<Record<string, unknown>> } {
  let held: { kids: string; set: ReturnType<typeof createLocalJWKSet> } | null = null;
  return {
    async verify(token) {
      const keys = await p.publicKeys();
      const kids = keys.map((k) => String(k.kid)).join(',');
      if (held?.kids !== kids) held = { kids, set: createLocalJWKSet({ keys: keys as unknown as JWK[] }) };
      const { payload } = await jwtVerify(token, held.set, {
        issuer: p.issuer,
        audience: p.audience,
        algorithms: ['RS256'],
        typ: 'at+jwt',
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['exp', 'sub'],
      });
      return payload as Record<string, unknown>;
    },
  };
}

/** A failure of the own provider's verification: 401 saying why, or 503 when its keys cannot be read. */
function ownFailure(err: unknown): ApiError {
  if (!(err instanceof joseErrors.JOSEError)) {
    return new ApiError('unavailable', 'The signing keys of this service\u2019s OpenID provider could not be read; retry later.', {}, { 'Retry-After': '5' });
  }
  const reason =
    err instanceof joseErrors.JWTExpired
      ? 'The token has expired.'
      : err instanceof joseErrors.JWKSNoMatchingKey
        ? 'The token was signed by an unknown key.'
        : err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'aud'
          ? 'The token is for another audience.'
          : err instanceof joseErrors.JWTClaimValidationFailed && err.claim === 'nbf'
            ? 'The token is not valid yet.'
            : 'The token is invalid.';
  return invalid(reason);
}

function toCaller(claims: Record<string, unknown>, config: Config, defaultIssuer: string): Caller {
  const roles = readClaim(claims, config.adminRoleClaim);
  const issuer = typeof claims.iss === 'string' && claims.iss !== '' ? claims.iss : defaultIssuer;
  // The admin role counts only from an admin issuer (docs/security.md#platform-admins).
  const hasAdminRole = Array.isArray(roles) ? roles.includes(config.adminRole) : roles === config.adminRole;
  const isPlatformAdmin = hasAdminRole && config.adminIssuers.includes(issuer);
  const adminRoleIgnored = hasAdminRole && !isPlatformAdmin ? (config.adminIssuers.length === 0 ? 'no_admin_issuer' : 'other_issuer') : undefined;
  const ev = claims.email_verified;
  return Object.freeze({
    issuer,
    subject: claims.sub as string,
    // Trimmed on the way in (a tab or space from an IdP would be stored and defeat comparisons).
    email: typeof claims.email === 'string' && claims.email.trim() !== '' ? claims.email.trim() : null,
    // Only true or "true" is verified; any other present value ("FALSE", 0, "yes"…) is not.
    emailVerified: ev === undefined ? null : ev === true || ev === 'true',
    name: typeof claims.name === 'string' ? claims.name : null,
    isPlatformAdmin,
    ...(adminRoleIgnored ? { adminRoleIgnored } : {}),
    claims: Object.freeze({ ...claims }),
  });
}

/** No surrounding white space (Unicode's, as String#trim knows it) and no C0, DEL or C1 control character anywhere. */
export function isWellFormedSubject(sub: string): boolean {
  // eslint-disable-next-line no-control-regex
  return sub !== '' && sub.trim() === sub && !/[\u0000-\u001f\u007f-\u009f]/.test(sub);
}

/** The bearer token of a well-formed Authorization header, else null (the verifier says why). */
function presentedToken(req: Pick<Request, 'headers'>): string | null {
  try {
    return bearerToken(req) ?? null;
  } catch {
    return null;
  }
}

/** `Authorization: Bearer <token>`, case-insensitive scheme; anything else is no token. */
export function bearerToken(req: Pick<Request, 'headers'>): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const m = /^Bearer[ ]+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(h);
  if (!m) throw Object.assign(new Error('The Authorization header must be "Bearer <token>".'), { code: 'credentials_bad_format' });
  return m[1];
}

/** True when the bearer token's JOSE header carries `crit`. Malformed tokens are left to the verifier. */
function hasCritHeader(req: Request): boolean {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return false;
  const m = /^Bearer[ ]+([A-Za-z0-9\-_]+)\./i.exec(h);
  if (!m || m[1]!.length > 8192) return false;
  try {
    const text = Buffer.from(m[1]!, 'base64url').toString('utf8');
    // Parsing is needed only when the key could be there, spelled plainly or with escapes.
    if (!text.includes('crit') && !text.includes('\\')) return false;
    const header = JSON.parse(text) as unknown;
    return header !== null && typeof header === 'object' && Object.prototype.hasOwnProperty.call(header, 'crit');
  } catch {
    return false;
  }
}

function invalid(reason: string): ApiError {
  return new ApiError('unauthorized', reason, {}, wwwAuth('invalid_token', reason.replace(/\.$/, '').replace(/"/g, "'").toLowerCase()));
}

function wwwAuth(error: string, description: string): Record<string, string> {
  return { 'WWW-Authenticate': `Bearer realm="tenant-service", error="${error}", error_description="${description}"` };
}

/**
 * Every verification failure is a 401 that reveals nothing, except keys that could not be
 * fetched: that is the service's trouble, not the token's (503, retry).
 */
function toUnauthorized(err: unknown): ApiError {
  if (err instanceof JwksUnavailableError) {
    return new ApiError('unavailable', 'The identity provider\u2019s signing keys could not be fetched; retry later.', {}, { 'Retry-After': String(err.retryAfterSeconds) });
  }
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
        : inner === 'UnknownKeyError'
          ? 'The token was signed by an unknown key.'
          : /audience/.test(e.inner?.message ?? '')
            ? 'The token is for another audience.'
            : /issuer/.test(e.inner?.message ?? '')
              ? 'The token is from another issuer.'
              : 'The token is invalid.';
  return new ApiError('unauthorized', reason, {}, wwwAuth('invalid_token', reason.replace(/\.$/, '').toLowerCase()));
}

function jwksSecret(jwksUri: string | (() => Promise<string>), opts?: JwksCacheOptions): { secret: GetVerificationKey; keys: KeySet } {
  const cache = createJwksCache(jwksUri, opts);
  const secret: GetVerificationKey = async (_req, token) => {
    if (!token || typeof token !== 'object' || !token.header) throw Object.assign(new Error('The token is not a JWT.'), { name: 'JsonWebTokenError' });
    const kid = token.header.kid;
    return cache.getKey(typeof kid === 'string' ? kid : undefined);
  };
  return { secret, keys: cache };
}

/** The JWKS of an OIDC issuer, found by discovery on first use (retried on the next fetch if that fails). */
function oidcSecret(issuer: string, opts?: JwksCacheOptions): { secret: GetVerificationKey; keys: KeySet } {
  let jwksUri: string | null = null;
  const discover = async (): Promise<string> => {
    if (jwksUri) return jwksUri;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`OIDC discovery failed with HTTP ${res.status}`);
    const doc = (await res.json()) as { jwks_uri?: unknown };
    if (typeof doc.jwks_uri !== 'string') throw new Error('OIDC discovery document has no jwks_uri');
    jwksUri = doc.jwks_uri;
    return jwksUri;
  };
  return jwksSecret(discover, opts);
}
