/**
 * A tenant's SSO connections and its `sso_required` (docs/sso.md): at most 5 connections, the
 * OIDC client secret sealed under SERVICE_KEY_ENCRYPTION_SECRET when set and never shown, every
 * change recorded as an event without secrets. Creating an OIDC connection discovers its
 * issuer first (no transaction is held while the network is asked).
 */
import { randomUUID } from 'node:crypto';
import { serviceBaseUrl, type Config } from '../../config';
import {
  deleteConnection,
  insertConnection,
  lockTenantConnections,
  selectConnection,
  selectConnections,
  selectTenantSso,
  updateConnection,
  upsertSsoRequired,
  type ConnectionPatch,
  type SsoStatus,
} from '../../db/queries/sso-connections';
import type { StoredSsoConnection } from '../../context/records';
import { withTenant, type Database, type Transaction } from '../../db/tenant-scope';
import { ApiError } from '../../errors';
import { recordEvent, type EventOrigin } from '../events';
import { openSecret, sealSecret } from '../key-encryption';
import { checkUrl, SsoNetworkError, type NetworkPolicy } from './network';
import { certificateInfo, normalizeCertificate, parseIdpMetadata } from './saml-metadata';

export const MAX_CONNECTIONS = 5;
export const DEFAULT_SCOPES = ['openid', 'email', 'profile'] as const;
const SECRET_INFO = 'tenant-service sso connection secret v1';

export interface SsoSettings {
  readonly keyEncryptionSecret: string | null;
  /** The base of the URLs an identity provider is given (SERVICE_PUBLIC_URL, else the service's own URL), without a trailing slash. */
  readonly publicUrl: string;
  readonly ssoAllowPrivateNetworks: boolean;
}

/** The settings of SSO in `config`. */
export function ssoSettings(config: Pick<Config, 'keyEncryptionSecret' | 'publicUrl' | 'tenantTokenIssuer' | 'ssoAllowPrivateNetworks'>): SsoSettings {
  return { keyEncryptionSecret: config.keyEncryptionSecret, publicUrl: serviceBaseUrl(config), ssoAllowPrivateNetworks: config.ssoAllowPrivateNetworks };
}

/** Checks an issuer by discovery (the OIDC side supplies it): throws SsoNetworkError or an Error naming the problem. */
export type IssuerCheck = (issuer: string, policy: NetworkPolicy) => Promise<void>;

export type OidcInput = { type: 'oidc'; name: string; issuer: string; client_id: string; client_secret: string; scopes?: readonly string[] };
export type SamlInput = { type: 'saml'; name: string; idp_metadata_xml?: string; idp_entity_id?: string; idp_sso_url?: string; idp_certificate?: string };

export interface PatchInput {
  readonly name?: string;
  readonly status?: SsoStatus;
  readonly client_secret?: string;
  readonly scopes?: readonly string[];
  readonly idp_sso_url?: string;
  readonly idp_certificate?: string;
}

/** The base of the URLs an identity provider is given. */
export function publicBase(settings: Pick<SsoSettings, 'publicUrl'>): string {
  return settings.publicUrl;
}

export const oidcRedirectUri = (base: string) => `${base}/sso/oidc/callback`;
export const samlEntityId = (base: string, id: string) => `${base}/sso/saml/${id}`;

/** What events say of a connection (no secret). */
export function connectionData(c: StoredSsoConnection): Record<string, unknown> {
  return c.type === 'oidc'
    ? { connection_id: c.id, type: c.type, name: c.name, status: c.status, issuer: c.oidcIssuer, client_id: c.oidcClientId, scopes: c.oidcScopes }
    : { connection_id: c.id, type: c.type, name: c.name, status: c.status, idp_entity_id: c.samlIdpEntityId, idp_sso_url: c.samlIdpSsoUrl, idp_certificate_sha256: certificateInfo(c.samlIdpCertificate!).fingerprint_sha256 };
}

/** The plain client secret of an OIDC connection (to call its token endpoint). */
export function openClientSecret(settings: Pick<SsoSettings, 'keyEncryptionSecret'>, c: StoredSsoConnection): string {
  return openSecret(settings.keyEncryptionSecret, SECRET_INFO, c.id, c.oidcStoredSecret!, `The client secret of SSO connection ${c.id}`);
}

const stored = (settings: SsoSettings, id: string, secret: string) => (settings.keyEncryptionSecret === null ? secret : sealSecret(settings.keyEncryptionSecret, SECRET_INFO, id, secret));

function scopesOf(input: readonly string[] | undefined): string[] {
  const scopes = [...new Set(input ?? DEFAULT_SCOPES)];
  for (const s of scopes) if (!/^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(s)) throw new ApiError('validation', `body.scopes: '${s.slice(0, 100)}' is not a scope token.`);
  return scopes.includes('openid') ? scopes : ['openid', ...scopes];
}

function httpsUrl(value: string, field: string, policy: NetworkPolicy): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ApiError('validation', `${field}: '${value.slice(0, 300)}' is not an absolute URL.`);
  }
  try {
    checkUrl(url, policy);
  } catch (err) {
    throw new ApiError('validation', `${field}: ${(err as Error).message}.`);
  }
  if (url.username || url.password) throw new ApiError('validation', `${field}: must not carry a user name or password.`);
  return value;
}

async function existing(trx: Transaction, tenantId: string, id: string, forUpdate = false): Promise<StoredSsoConnection> {
  const c = await selectConnection(trx, tenantId, id, forUpdate);
  if (!c) throw new ApiError('notFound', `The tenant has no SSO connection '${id}'.`);
  return c;
}

async function insertWithEvent(trx: Transaction, origin: EventOrigin, row: Parameters<typeof insertConnection>[1]): Promise<StoredSsoConnection> {
  const held = await lockTenantConnections(trx, row.tenantId);
  if (held >= MAX_CONNECTIONS) throw new ApiError('conflict', `The tenant already has ${MAX_CONNECTIONS} SSO connections, the limit; delete one first.`);
  const c = await insertConnection(trx, row);
  await recordEvent(trx, origin, { action: 'sso_connection.created', tenantId: row.tenantId, target: { type: 'sso_connection', id: c.id }, data: { connection: connectionData(c) } });
  return c;
}

/** Creates an OIDC connection after discovering its issuer (a failure: 400 naming it). */
export async function createOidcConnection(db: Database, settings: SsoSettings, check: IssuerCheck, origin: EventOrigin, tenantId: string, input: OidcInput): Promise<StoredSsoConnection> {
  publicBase(settings);
  const policy = { allowPrivateNetworks: settings.ssoAllowPrivateNetworks };
  const issuer = httpsUrl(input.issuer, 'body.issuer', policy);
  const scopes = scopesOf(input.scopes);
  try {
    await check(issuer, policy);
  } catch (err) {
    const why = err instanceof SsoNetworkError ? err.message : ((err as Error).message ?? String(err)).slice(0, 300);
    throw new ApiError('validation', `body.issuer: discovery of '${issuer.slice(0, 300)}' failed: ${why}`);
  }
  const id = randomUUID();
  return withTenant(db, tenantId, (trx) =>
    insertWithEvent(trx, origin, { tenantId, id, type: 'oidc', name: input.name, oidc: { issuer, clientId: input.client_id, storedSecret: stored(settings, id, input.client_secret), scopes } }),
  );
}

/** Creates a SAML connection from the IdP's metadata or its three fields. */
export async function createSamlConnection(trx: Transaction, settings: SsoSettings, origin: EventOrigin, tenantId: string, input: SamlInput): Promise<StoredSsoConnection> {
  publicBase(settings);
  const policy = { allowPrivateNetworks: settings.ssoAllowPrivateNetworks };
  let idp: { entityId: string; ssoUrl: string; certificate: string };
  if (input.idp_metadata_xml !== undefined) {
    if (input.idp_entity_id !== undefined || input.idp_sso_url !== undefined || input.idp_certificate !== undefined) {
      throw new ApiError('validation', 'body: give either idp_metadata_xml or idp_entity_id, idp_sso_url and idp_certificate, not both.');
    }
    idp = parseIdpMetadata(input.idp_metadata_xml);
  } else {
    if (input.idp_entity_id === undefined || input.idp_sso_url === undefined || input.idp_certificate === undefined) {
      throw new ApiError('validation', 'body: a SAML connection needs idp_metadata_xml, or idp_entity_id, idp_sso_url and idp_certificate.');
    }
    idp = { entityId: input.idp_entity_id, ssoUrl: input.idp_sso_url, certificate: normalizeCertificate(input.idp_certificate, 'body.idp_certificate') };
  }
  httpsUrl(idp.ssoUrl, input.idp_metadata_xml !== undefined ? 'body.idp_metadata_xml (SingleSignOnService)' : 'body.idp_sso_url', policy);
  const id = randomUUID();
  return insertWithEvent(trx, origin, { tenantId, id, type: 'saml', name: input.name, saml: { idpEntityId: idp.entityId, idpSsoUrl: idp.ssoUrl, idpCertificate: idp.certificate } });
}

export function listConnections(trx: Transaction, tenantId: string): Promise<StoredSsoConnection[]> {
  return selectConnections(trx, tenantId);
}

export function getConnection(trx: Transaction, tenantId: string, id: string): Promise<StoredSsoConnection> {
  return existing(trx, tenantId, id);
}

/** The last active connection of a tenant requiring SSO may not go: nobody could sign in. */
async function keepOneActive(trx: Transaction, tenantId: string, c: StoredSsoConnection, verb: string): Promise<void> {
  if (c.status !== 'active') return;
  const sso = await selectTenantSso(trx, tenantId);
  if (!sso.ssoRequired) return;
  const others = (await selectConnections(trx, tenantId)).filter((o) => o.id !== c.id && o.status === 'active');
  if (others.length === 0) throw new ApiError('conflict', `The tenant requires SSO and this is its only active connection; ${verb} it would lock every member out. Set sso_required to false first (PATCH /api/tenant/sso).`);
}

export async function updateSsoConnection(trx: Transaction, settings: SsoSettings, origin: EventOrigin, tenantId: string, id: string, p: PatchInput): Promise<StoredSsoConnection> {
  await lockTenantConnections(trx, tenantId);
  const c = await existing(trx, tenantId, id, true);
  const policy = { allowPrivateNetworks: settings.ssoAllowPrivateNetworks };
  const wrong = c.type === 'oidc' ? (['idp_sso_url', 'idp_certificate'] as const) : (['client_secret', 'scopes'] as const);
  for (const f of wrong) if (p[f] !== undefined) throw new ApiError('validation', `body.${f}: does not apply to a ${c.type.toUpperCase()} connection.`);
  const patch: { -readonly [K in keyof ConnectionPatch]: ConnectionPatch[K] } = {};
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  const change = (key: string, from: unknown, to: unknown) => {
    before[key] = from;
    after[key] = to;
  };
  if (p.name !== undefined && p.name !== c.name) {
    patch.name = p.name;
    change('name', c.name, p.name);
  }
  if (p.status !== undefined && p.status !== c.status) {
    if (p.status === 'inactive') await keepOneActive(trx, tenantId, c, 'deactivating');
    patch.status = p.status;
    change('status', c.status, p.status);
  }
  if (p.scopes !== undefined) {
    const scopes = scopesOf(p.scopes);
    if (scopes.join(' ') !== (c.oidcScopes ?? []).join(' ')) {
      patch.oidcScopes = scopes;
      change('scopes', c.oidcScopes, scopes);
    }
  }
  if (p.client_secret !== undefined) {
    patch.oidcStoredSecret = stored(settings, c.id, p.client_secret);
    change('client_secret', '[changed]', '[changed]');
  }
  if (p.idp_sso_url !== undefined && p.idp_sso_url !== c.samlIdpSsoUrl) {
    patch.samlIdpSsoUrl = httpsUrl(p.idp_sso_url, 'body.idp_sso_url', policy);
    change('idp_sso_url', c.samlIdpSsoUrl, p.idp_sso_url);
  }
  if (p.idp_certificate !== undefined) {
    const cert = normalizeCertificate(p.idp_certificate, 'body.idp_certificate');
    if (cert !== c.samlIdpCertificate) {
      patch.samlIdpCertificate = cert;
      change('idp_certificate_sha256', certificateInfo(c.samlIdpCertificate!).fingerprint_sha256, certificateInfo(cert).fingerprint_sha256);
    }
  }
  if (Object.keys(patch).length === 0) return c;
  const updated = await updateConnection(trx, tenantId, c.id, patch);
  await recordEvent(trx, origin, { action: 'sso_connection.updated', tenantId, target: { type: 'sso_connection', id: c.id }, data: { connection: connectionData(updated), before, after } });
  return updated;
}

export async function deleteSsoConnection(trx: Transaction, origin: EventOrigin, tenantId: string, id: string): Promise<void> {
  await lockTenantConnections(trx, tenantId);
  const c = await existing(trx, tenantId, id, true);
  await keepOneActive(trx, tenantId, c, 'deleting');
  await deleteConnection(trx, tenantId, c.id);
  await recordEvent(trx, origin, { action: 'sso_connection.deleted', tenantId, target: { type: 'sso_connection', id: c.id }, data: { connection: connectionData(c) } });
}

export interface SsoState {
  readonly ssoRequired: boolean;
  readonly updatedAt: Date | null;
  readonly connection: { id: string; type: 'oidc' | 'saml' } | null;
}

export function getSso(trx: Transaction, tenantId: string): Promise<SsoState> {
  return selectTenantSso(trx, tenantId);
}

/** Sets `sso_required`; true with no active connection: 409 (nobody could sign in). */
export async function setSsoRequired(trx: Transaction, origin: EventOrigin, tenantId: string, required: boolean): Promise<SsoState> {
  await lockTenantConnections(trx, tenantId);
  const now = await selectTenantSso(trx, tenantId);
  if (required && !now.connection) throw new ApiError('conflict', 'The tenant has no active SSO connection: requiring SSO now would lock every member out. Create or activate a connection first.');
  if (now.ssoRequired === required) return now;
  const updatedAt = await upsertSsoRequired(trx, tenantId, required);
  await recordEvent(trx, origin, { action: 'sso_settings.updated', tenantId, target: { type: 'sso_settings', id: tenantId }, data: { before: { sso_required: now.ssoRequired }, after: { sso_required: required } } });
  return { ...now, ssoRequired: required, updatedAt };
}

/** createSamlConnection in its own tenant transaction. */
export function createSamlConnectionIn(db: Database, settings: SsoSettings, origin: EventOrigin, tenantId: string, input: SamlInput): Promise<StoredSsoConnection> {
  return withTenant(db, tenantId, (trx) => createSamlConnection(trx, settings, origin, tenantId, input));
}
