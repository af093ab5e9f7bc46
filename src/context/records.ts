/**
 * What the queries of src/db/queries return beside the tenant and member vocabulary of
 * ./entities.ts (docs/architecture.md#one-vocabulary): the directory's users and groups, SCIM
 * tokens, invitations, boards, events, webhooks, signing keys and console sign-in codes. Each is
 * declared here once, in the API's own spelling (snake_case, as the contract's bodies are), and
 * src/db maps its rows to it; no layer above src/db names a row or a model (the lint rule
 * `rows stay in src/db`, docs/architecture.md#rows-stay-in-srcdb). Types only.
 */
import type { RoleKey } from './roles';

/** An email of a directory user, as SCIM writes it. */
export interface DirectoryEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

/** What SCIM writes of a user (docs/directory-sync.md#directory-users-are-members); `*_key` are the folded match keys. */
export interface DirectoryUserFields {
  user_name: string;
  user_name_key: string;
  external_id: string | null;
  display_name: string | null;
  name: Record<string, string>;
  emails: DirectoryEmail[];
  email_keys: string[];
  active: boolean;
  /** The text attributes kept without a column of their own (`title`, `locale`…), by SCIM name. */
  attributes: Record<string, string>;
}

/** A directory user: what SCIM wrote, its role, and the member it is bound to (null: none yet). */
export interface DirectoryUser extends DirectoryUserFields {
  tenant_id: string;
  id: string;
  role: string;
  user_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A directory user as the admins' list shows it (docs/directory-sync.md#what-tenant-admins-see). */
export type DirectoryListEntry = Omit<DirectoryUser, 'tenant_id' | 'user_name_key' | 'name' | 'email_keys'>;

/** What SCIM writes of a group (its members are written apart, set-based). */
export interface DirectoryGroupFields {
  display_name: string;
  external_id: string | null;
}

/** A directory group. */
export interface DirectoryGroup extends DirectoryGroupFields {
  tenant_id: string;
  id: string;
  created_at: Date;
  updated_at: Date;
}

/** A SCIM token as listed (its hash never leaves src/db). */
export interface ScimToken {
  tenant_id: string;
  id: string;
  description: string | null;
  created_at: Date;
  last_used_at: Date | null;
}

/** An invitation (docs/tenants.md). */
export interface InvitationRecord {
  tenant_id: string;
  id: string;
  email: string;
  role: RoleKey;
  token_hash: string;
  /** Stored status; `expired` is also computed on read from `expires_at`. */
  status: 'pending' | 'accepted' | 'revoked' | 'expired';
  expires_at: Date;
  invited_by: string | null;
  invited_by_email: string | null;
  accepted_by: string | null;
  accepted_at: Date | null;
  revoked_at: Date | null;
  delivery: InvitationDelivery;
  created_at: Date;
  updated_at: Date;
}
export type InvitationDelivery = 'sent' | 'failed' | 'not_configured';

/** A stored Idempotency-Key's request hash and first response. */
export interface IdempotencyRecord {
  request_hash: string;
  response: Record<string, unknown>;
}

/** A board (the tenant's own content). */
export interface BoardRecord {
  tenant_id: string;
  id: string;
  name: string;
  description: string | null;
  created_by: string | null;
  created_at: Date;
}

/** A generation of a board. */
export interface GenerationRecord {
  tenant_id: string;
  id: string;
  board_id: string;
  prompt: string;
  status: 'pending' | 'running' | 'completed' | 'failed';
  media_url: string | null;
  media_type: string | null;
  created_at: Date;
}

/** An event of the audit log as stored (docs/events.md). */
export interface StoredEvent {
  id: string;
  occurred_at: Date;
  action: string;
  tenant_id: string | null;
  actor_issuer: string | null;
  actor_subject: string | null;
  actor_email: string | null;
  actor_platform_admin: boolean;
  /** The SCIM token a directory change came through (docs/directory-sync.md#events); null otherwise. */
  actor_scim_token_id?: string | null;
  target_type: string;
  target_id: string | null;
  request_id: string | null;
  ip: string | null;
  data: Record<string, unknown>;
}

/** An event of a page: `cursor_ts` is occurred_at as microsecond UTC text, `data_bytes` its stored data's jsonb text size. */
export type StoredEventOfPage = StoredEvent & { cursor_ts: string; data_bytes: number; row_bytes: number };

/** A webhook endpoint; `secret` as stored (sealed, src/domain/secrets-at-rest.ts). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  enabled: boolean;
  secret: string;
  created_at: Date;
  updated_at: Date;
}

/** A delivery of an event to an endpoint (the outbox). */
export interface WebhookDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  tenant_id: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: Date;
  created_at: Date;
  finished_at: Date | null;
}

/** One attempt of a delivery. */
export interface WebhookAttempt {
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  next_retry_at: Date | null;
}

/** A tenant-token signing key (docs/tenant-tokens.md); `private_key` sealed when `private_key_encryption` says so. */
export interface TenantTokenKey {
  kid: string;
  algorithm: 'ES256';
  public_jwk: Record<string, unknown>;
  private_key: Record<string, unknown>;
  private_key_encryption: 'none' | 'aes-256-gcm';
  created_at: Date;
  signs_from: Date;
  signs_until: Date | null;
  published_until: Date | null;
}

/** A console sign-in code (its token sealed), taken once. */
export interface ConsoleSignInCode {
  id: string;
  code_hash: Buffer;
  sealed_token: Record<string, unknown>;
  issuer: string;
  subject: string;
  platform_admin: boolean;
  created_at: Date;
  expires_at: Date;
}

/** A signing key of the service's OpenID provider (docs/sign-in.md#signing-keys): a tenant-token key's shape, RS256. */
export interface OidcSigningKey extends Omit<TenantTokenKey, 'algorithm'> {
  algorithm: 'RS256';
}

export type SsoConnectionType = 'oidc' | 'saml';
export type SsoConnectionStatus = 'active' | 'inactive';

/**
 * A tenant's SSO connection as stored (docs/sso.md), the client secret still sealed; the API's
 * body is the contract's `SsoConnection`. Named in camelCase as the sign-in code reads it.
 */
export interface StoredSsoConnection {
  readonly tenantId: string;
  readonly id: string;
  readonly type: SsoConnectionType;
  readonly name: string;
  readonly status: SsoConnectionStatus;
  readonly oidcIssuer: string | null;
  readonly oidcClientId: string | null;
  /** The stored form: sealed (`enc1.…`) or plain. */
  readonly oidcStoredSecret: string | null;
  readonly oidcScopes: readonly string[] | null;
  readonly samlIdpEntityId: string | null;
  readonly samlIdpSsoUrl: string | null;
  /** Base64 DER of the IdP's signing certificate. */
  readonly samlIdpCertificate: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A sign-in sent to a tenant's identity provider, awaiting its callback (`usedAt` set once used). */
export interface SsoRequest {
  readonly id: string;
  readonly kind: SsoConnectionType;
  readonly tenantId: string;
  readonly connectionId: string;
  readonly interactionUid: string;
  readonly codeVerifier: string | null;
  readonly nonce: string | null;
  readonly expiresAt: Date;
  readonly usedAt: Date | null;
}

/** A person's account as sign-in's admission writes it (sign_in_accounts). */
export interface SignInAccountRecord {
  readonly id: string;
  readonly email: string | null;
  readonly email_verified: boolean;
  readonly name: string | null;
}

/** One of an account's identities (sign_in_identities): who vouched for the person, and through what. */
export interface SignInIdentityRecord {
  readonly account_id: string;
  readonly kind: 'email' | 'oidc' | 'saml';
  readonly issuer: string;
  readonly subject: string;
  readonly connection_id: string | null;
  readonly tenant_id: string | null;
}

/** A one-time code mailed for a sign-in (sign_in_email_codes): only its HMAC is kept. */
export interface EmailCode {
  readonly id: string;
  readonly email: string;
  readonly interaction_uid: string;
  readonly code_hash: Buffer;
  readonly ip: string | null;
  readonly attempts: number;
  readonly created_at: Date;
  readonly expires_at: Date;
  readonly dead_at: Date | null;
}

/** Who a sign-in in progress identified, kept until the browser is back at its interaction (sign_in_handbacks). */
export interface SignInHandback {
  readonly id: string;
  readonly account_id: string;
  readonly method: 'email' | 'sso';
  readonly tenant_id: string | null;
  readonly connection_id: string | null;
}
