/**
 * Tenant tokens (docs/tenant-tokens.md): short-lived ES256 `at+jwt` tokens that tell a product
 * which tenant a request belongs to, verified by the product against /.well-known/jwks.json with
 * no call back. One module from the member's token down to its key set: who gets a token and
 * what it says (`issueMemberToken`, `mintTenantToken`), the key set every instance keeps in memory
 * (`TenantTokenKeys`), and the shared key set in PostgreSQL (docs/tenant-tokens.md#the-key-set):
 * ES256 keys created once whoever starts first, rotated so that verifiers always know a key before
 * a token carries it, private keys encrypted at rest when a secret is configured.
 *
 * Key timing. Every instance keeps the key set in memory and reloads it from PostgreSQL every
 * `refreshMs` (default 60 s). Which key signs is decided by the database's clock from each key's
 * `signs_from`/`signs_until`, so all instances switch at the same instant. A rotation publishes
 * the next key `publishDelaySeconds` (default 15 minutes) before it signs: longer than an
 * instance's reload plus the JWKS's `Cache-Control: max-age=300` plus jose's default 10-minute
 * cache, so a verifier that refetches the JWKS at least every 10 minutes has the key before the
 * first token carries it. The previous key stays published for the token lifetime plus a minute
 * after it stops signing, then is dropped.
 */
import crypto from 'node:crypto';
import { SignJWT } from 'jose';
import type { Logger } from 'pino';
import type { Config } from '../config';
import type { RoleKey } from '../context/roles';
import {
  deleteUnpublishedTenantTokenKeys,
  insertTenantTokenKey,
  lockTenantTokenKeys,
  retireTenantTokenKey,
  selectLatestTenantTokenKey,
  selectPublishedTenantTokenKeys,
  type NewTenantTokenKey,
} from '../db/queries/tenant-tokens';
import { withService, type Database } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { recordEvent, type EventOrigin } from './events';
import { decryptPrivateKey, encryptPrivateKey, SecretDecryptionError, type EncryptedEnvelope } from './key-encryption';
import { downgradeRefusal, holdsEncryptedSecrets, refusePlainSecretDowngrade } from './secrets-at-rest';
import { OIDC_KEEP_PUBLISHED_SECONDS, rotateOidcKeys } from '../oidc/keys';
import type { TenantTokenKey } from '../context/records';


/** Default delay between publishing a key and signing with it. */
export const PUBLISH_DELAY_SECONDS = 900;
/** Margin after a retired key's last token expires before it is dropped (clock skew, verifiers' leeway). */
export const RETIRED_KEY_MARGIN_SECONDS = 60;
const REFRESH_MS = 60_000;
/** After a failed background reload, the next try waits this long (the cached set keeps serving). */
const RETRY_MS = 5_000;

/** Internal timing (tests shorten them); the defaults are the production values. */
export interface TenantTokenKeyOptions {
  refreshMs?: number;
  publishDelaySeconds?: number;
}

interface KeySetState {
  readonly rows: readonly TenantTokenKey[];
  /** Database clock minus this process's clock, in ms, measured at load. */
  readonly clockOffsetMs: number;
  readonly loadedAt: number;
  /** No signing key exists and none was made: a plain one would sit beside encrypted secrets. */
  readonly refusedPlainKey: boolean;
}

/** The tenant-token key set of one instance: a cache of the shared set in PostgreSQL. */
export class TenantTokenKeys {
  private state: KeySetState | null = null;
  private loading: Promise<KeySetState> | null = null;
  private nextLoadAt = 0;
  private readonly privateKeys = new Map<string, crypto.KeyObject>();
  private readonly refreshMs: number;
  private readonly publishDelaySeconds: number;

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly logger: Logger,
    opts: TenantTokenKeyOptions = {},
  ) {
    this.refreshMs = opts.refreshMs ?? REFRESH_MS;
    this.publishDelaySeconds = opts.publishDelaySeconds ?? PUBLISH_DELAY_SECONDS;
  }

  /** The public JWKs to publish now (next, current and retired-but-valid keys). */
  async publicJwks(): Promise<Array<Record<string, unknown>>> {
    const state = await this.current();
    const now = Date.now() + state.clockOffsetMs;
    return state.rows.filter((r) => r.published_until === null || r.published_until.getTime() > now).map((r) => ({ ...r.public_jwk }));
  }

  /**
   * The key that signs now, by the database's clock. Without SERVICE_KEY_ENCRYPTION_SECRET, a key
   * set holding encrypted keys signs nothing (docs/security.md#secrets-at-rest): 503.
   */
  async signingKey(): Promise<{ kid: string; privateKey: crypto.KeyObject }> {
    let state = await this.current();
    this.refuseDowngrade(state);
    let row = signerAt(state);
    if (!row) {
      // Only a set that changed under us (a key deleted by hand): read it again, creating one if none.
      state = await this.reload();
      this.refuseDowngrade(state);
      row = signerAt(state);
      if (!row) throw new ApiError('unavailable', 'No tenant-token signing key is available yet; retry.', {}, { 'Retry-After': '1' });
    }
    let privateKey = this.privateKeys.get(row.kid);
    if (!privateKey) {
      try {
        privateKey = privateKeyOf(row, this.config.keyEncryptionSecret);
      } catch (err) {
        if (!(err instanceof SecretDecryptionError)) throw err;
        this.logger.error({ kid: row.kid, reason: err.message }, 'Tenant-token signing key unusable');
        throw new ApiError('unavailable', 'The service cannot use its tenant-token signing key; its operator must check SERVICE_KEY_ENCRYPTION_SECRET.', {}, { 'Retry-After': '60' });
      }
      this.privateKeys.set(row.kid, privateKey);
    }
    return { kid: row.kid, privateKey };
  }

  /** Throws the 503 refusal when this instance has no secret and the set holds encrypted keys (or refused to create a plain first key). */
  private refuseDowngrade(state: KeySetState): void {
    if (this.config.keyEncryptionSecret !== null) return;
    if (!state.refusedPlainKey && !state.rows.some((r) => r.private_key_encryption !== 'none')) return;
    const detail = downgradeRefusal('sign tenant tokens');
    this.logger.error({ reason: detail }, 'Tenant-token signing refused: SERVICE_KEY_ENCRYPTION_SECRET is not set');
    throw new ApiError('unavailable', detail, {}, { 'Retry-After': '60' });
  }

  /**
   * Rotates the shared key set (see the module comment for the timing) and reloads it here. The
   * OpenID provider's signing keys rotate with it, with the same publication delay
   * (docs/sign-in.md#signing-keys).
   */
  async rotate(origin: EventOrigin): Promise<RotationResult> {
    const result = await rotateTenantTokenKeys(this.db, origin, this.config.keyEncryptionSecret, {
      publishDelaySeconds: this.publishDelaySeconds,
      keepPublishedSeconds: this.config.tenantTokenTtlSeconds + RETIRED_KEY_MARGIN_SECONDS,
    });
    // After the tenant-token keys: a refusal (no secret beside encrypted keys) is theirs first, and refuses both alike.
    await rotateOidcKeys(this.db, this.config.keyEncryptionSecret, { publishDelaySeconds: this.publishDelaySeconds, keepPublishedSeconds: OIDC_KEEP_PUBLISHED_SECONDS });
    await this.reload();
    return result;
  }

  private async current(): Promise<KeySetState> {
    const state = this.state;
    if (state === null) return this.reload();
    if (Date.now() >= this.nextLoadAt && this.loading === null) {
      // Stale: reload in the background and serve the cached set meanwhile (a reload comes long
      // before any published key starts signing).
      this.reload().catch((err: unknown) => {
        this.nextLoadAt = Date.now() + RETRY_MS;
        this.logger.warn({ err }, 'Tenant-token keys could not be reloaded; the cached set stays in use');
      });
    }
    return state;
  }

  private reload(): Promise<KeySetState> {
    this.loading ??= this.load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async load(): Promise<KeySetState> {
    const started = Date.now();
    let read = await readTenantTokenKeys(this.db);
    let refusedPlainKey = false;
    if (!read.rows.some((r) => r.signs_until === null)) {
      refusedPlainKey = !(await ensureTenantTokenKey(this.db, this.config.keyEncryptionSecret));
      read = await readTenantTokenKeys(this.db);
    }
    const state: KeySetState = { rows: read.rows, clockOffsetMs: read.now.getTime() - started, loadedAt: Date.now(), refusedPlainKey };
    for (const kid of this.privateKeys.keys()) if (!read.rows.some((r) => r.kid === kid)) this.privateKeys.delete(kid);
    this.state = state;
    this.nextLoadAt = state.loadedAt + this.refreshMs;
    return state;
  }
}

/** The key signing at the database's now: the latest `signs_from` not in the future and not retired. */
function signerAt(state: KeySetState): TenantTokenKey | undefined {
  const now = Date.now() + state.clockOffsetMs;
  let best: TenantTokenKey | undefined;
  for (const r of state.rows) {
    if (r.signs_from.getTime() > now) continue;
    if (r.signs_until !== null && r.signs_until.getTime() <= now) continue;
    if (!best || r.signs_from > best.signs_from) best = r;
  }
  return best;
}

/** Who a tenant token is for: a verified caller who is a member of the resolved tenant. */
export interface TenantTokenSubject {
  readonly caller: { readonly issuer: string; readonly subject: string; readonly claims: Readonly<Record<string, unknown>> };
  readonly tenant: { readonly id: string; readonly slug: string };
  readonly membership: { readonly userId: string; readonly role: RoleKey; readonly permissions: readonly string[] };
}

export interface IssuedTenantToken {
  readonly accessToken: string;
  readonly expiresIn: number;
  readonly tenantId: string;
  readonly tenantSlug: string;
  readonly role: RoleKey;
  /** The role's permissions, sorted. */
  readonly permissions: readonly string[];
}

/**
 * Mints a tenant token (ES256, `typ: at+jwt`, RFC 9068 claims plus the tenant's). Used by
 * `POST /api/tenant/token` and by the decision endpoint's `X-Tenant-Token`.
 */
async function mintTenantToken(keys: TenantTokenKeys, config: Config, subject: TenantTokenSubject): Promise<IssuedTenantToken> {
  const { kid, privateKey } = await keys.signingKey();
  const now = Math.floor(Date.now() / 1000);
  const ttl = config.tenantTokenTtlSeconds;
  const accessToken = await new SignJWT({
    idp_iss: subject.caller.issuer,
    tenant_id: subject.tenant.id,
    tenant_slug: subject.tenant.slug,
    tenant_role: subject.membership.role,
    permissions: [...subject.membership.permissions],
    user_id: subject.membership.userId,
    // RFC 9068 requires client_id: the identity provider's client the caller signed in with, when its token names one.
    client_id: clientIdOf(subject.caller.claims),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid })
    .setIssuer(config.tenantTokenIssuer)
    .setAudience(config.tenantTokenAudience)
    .setSubject(subject.caller.subject)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .setJti(crypto.randomUUID())
    .sign(privateKey);
  return { accessToken, expiresIn: ttl, tenantId: subject.tenant.id, tenantSlug: subject.tenant.slug, role: subject.membership.role, permissions: subject.membership.permissions };
}

function clientIdOf(claims: Readonly<Record<string, unknown>>): string {
  for (const v of [claims.client_id, claims.azp]) if (typeof v === 'string' && v !== '' && v.length <= 255) return v;
  return 'tenant-service';
}

/**
 * True for the claims of one of this service's tenant tokens (its issuer or audience): such a
 * token is for the product, never a bearer token for this service.
 */
export function isTenantTokenClaims(claims: Readonly<Record<string, unknown>>, config: Config): boolean {
  if (claims.iss === config.tenantTokenIssuer) return true;
  const aud = claims.aud;
  return aud === config.tenantTokenAudience || (Array.isArray(aud) && aud.includes(config.tenantTokenAudience));
}

/**
 * What issuing reads of the entered request (an EnteredTenant of src/context/request.ts is one).
 * Named here rather than imported: the request context holds the app's services, which name this
 * module's TenantTokenKeys, and the import would close a cycle (docs/architecture.md#import-cycles).
 */
interface MemberTokenRequest {
  readonly caller: TenantTokenSubject['caller'];
  readonly tenant: TenantTokenSubject['tenant'];
  readonly membership: TenantTokenSubject['membership'] | null;
  readonly config: Config;
  readonly services: { readonly tenantTokenKeys: TenantTokenKeys; readonly metrics?: { readonly tenantTokenIssued?: () => void } };
}

/**
 * The tenant token of the entered member, as both `POST /api/tenant/token` (issueTenantToken) and
 * the gateway decision's `X-Tenant-Token` hand it out: members only, minted, counted. 403 when
 * the caller is not a member.
 */
export async function issueMemberToken(ctx: MemberTokenRequest): Promise<IssuedTenantToken> {
  if (!ctx.membership) {
    throw new ApiError('accessDenied', `Tenant tokens are issued to members only; you are not a member of tenant '${ctx.tenant.slug}'.`);
  }
  const token = await mintTenantToken(ctx.services.tenantTokenKeys, ctx.config, { caller: ctx.caller, tenant: ctx.tenant, membership: ctx.membership });
  ctx.services.metrics?.tenantTokenIssued?.();
  return token;
}

// The shared key set in PostgreSQL.

/** When a rotation takes effect. */
export interface RotationTiming {
  /** The next key is published this long before it signs (verifiers refresh their JWKS meanwhile). */
  readonly publishDelaySeconds: number;
  /** The previous key stays published this long after it stops signing (its tokens' lifetime and a margin). */
  readonly keepPublishedSeconds: number;
}

export interface RotationResult {
  readonly kid: string;
  readonly signsFrom: Date;
  readonly previousKid: string | null;
  readonly previousPublishedUntil: Date | null;
}

/** A new ES256 key pair, its private half as stored (encrypted when `secret` is set). */
function generateKey(secret: string | null): NewTenantTokenKey {
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string; y: string; d: string };
  // RFC 7638 thumbprint: the required members in lexicographic order.
  const kid = crypto.createHash('sha256').update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })).digest('base64url');
  const publicJwk = { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' };
  if (secret === null) return { kid, publicJwk, privateKey: { ...jwk }, encryption: 'none' };
  return { kid, publicJwk, privateKey: { ...encryptPrivateKey(secret, kid, JSON.stringify(jwk)) }, encryption: 'aes-256-gcm' };
}

/**
 * Creates the first key unless one exists; two instances calling it at once end with one key.
 * Returns false, creating nothing, when `secret` is unset and the database holds encrypted
 * secrets: a plain key is never written beside them (docs/security.md#secrets-at-rest).
 */
async function ensureTenantTokenKey(db: Database, secret: string | null): Promise<boolean> {
  return withService(db, async (trx) => {
    if (await selectLatestTenantTokenKey(trx)) return true;
    await lockTenantTokenKeys(trx);
    if (await selectLatestTenantTokenKey(trx)) return true;
    if (secret === null && (await holdsEncryptedSecrets(trx))) return false;
    // The first key signs at once: no verifier can hold an older copy of an empty key set.
    await insertTenantTokenKey(trx, generateKey(secret), 0);
    return true;
  });
}

/** The published keys and the database's clock (instances sign by it, whatever their own clock). */
async function readTenantTokenKeys(db: Database): Promise<{ rows: TenantTokenKey[]; now: Date }> {
  return withService(db, (trx) => selectPublishedTenantTokenKeys(trx), { readOnly: true });
}

/**
 * Makes the next key: published now, signing after `publishDelaySeconds`; the current newest key
 * signs until then and stays published `keepPublishedSeconds` longer. Keys past their
 * publication are deleted. Records `tenant_token.key_rotated` (key ids and times only).
 */
export async function rotateTenantTokenKeys(db: Database, origin: EventOrigin, secret: string | null, timing: RotationTiming): Promise<RotationResult> {
  return withService(db, async (trx) => {
    await lockTenantTokenKeys(trx);
    await refusePlainSecretDowngrade(trx, secret, 'rotate the tenant-token signing keys');
    const latest = await selectLatestTenantTokenKey(trx, true);
    const delay = latest ? timing.publishDelaySeconds : 0;
    const previous = latest ? await retireTenantTokenKey(trx, latest.kid, delay, timing.keepPublishedSeconds) : null;
    const next = await insertTenantTokenKey(trx, generateKey(secret), delay);
    await deleteUnpublishedTenantTokenKeys(trx);
    const result: RotationResult = {
      kid: next.kid,
      signsFrom: next.signs_from,
      previousKid: previous?.kid ?? null,
      previousPublishedUntil: previous?.published_until ?? null,
    };
    await recordEvent(trx, origin, {
      action: 'tenant_token.key_rotated',
      tenantId: null,
      target: { type: 'tenant_token_key', id: next.kid },
      data: {
        kid: next.kid,
        algorithm: 'ES256',
        signs_from: next.signs_from.toISOString(),
        previous_kid: result.previousKid,
        previous_signs_until: previous?.signs_until?.toISOString() ?? null,
        previous_published_until: result.previousPublishedUntil?.toISOString() ?? null,
      },
    });
    return result;
  });
}

/** The private key of a row, decrypted with `secret` when it is stored encrypted. */
export function privateKeyOf(row: TenantTokenKey, secret: string | null): crypto.KeyObject {
  let jwk: crypto.JsonWebKey;
  if (row.private_key_encryption === 'none') {
    jwk = row.private_key as crypto.JsonWebKey;
  } else {
    if (secret === null) throw new SecretDecryptionError(`Tenant-token key ${row.kid} is encrypted but SERVICE_KEY_ENCRYPTION_SECRET is not set.`);
    try {
      jwk = JSON.parse(decryptPrivateKey(secret, row.kid, row.private_key as unknown as EncryptedEnvelope)) as crypto.JsonWebKey;
    } catch {
      throw new SecretDecryptionError(`Tenant-token key ${row.kid} does not decrypt with SERVICE_KEY_ENCRYPTION_SECRET (another secret?).`);
    }
  }
  return crypto.createPrivateKey({ key: jwk, format: 'jwk' });
}
