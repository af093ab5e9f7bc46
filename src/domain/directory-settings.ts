/**
 * A tenant's directory sync settings and SCIM tokens (docs/directory-sync.md): tokens are shown
 * once and stored as SHA-256; the first makes the tenant directory-managed.
 */
import crypto from 'node:crypto';
import { serviceBaseUrl, type Config } from '../config';
import { selectDirectorySettings, upsertDirectorySettings, type DirectorySettings, type GroupRole } from '../db/queries/directory-settings';
import { selectRolePermissions } from '../db/queries/roles';
import { countScimTokens, deleteScimToken, insertScimToken, lockScimTokens, selectScimTokens } from '../db/queries/scim-tokens';
import type { Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';
import { applyGroupRoles } from './directory-roles';
import { changedFields, recordEvent, type EventOrigin } from './events';
import type { ScimToken } from '../context/records';

export type { GroupRole };

/** Tokens per tenant, at most (a rotation needs two at once; more is a leak waiting to happen). */
export const MAX_SCIM_TOKENS = 20;
/** A SCIM token's prefix: what tells it from a JWT at a glance. */
export const SCIM_TOKEN_PREFIX = 'scim_';

/** The stored form of a token: SHA-256 hex (the token is 32 random bytes: no salt or slow hash needed). */
export function scimTokenHash(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

export interface ScimSettingsView {
  readonly baseUrl: string;
  readonly enabled: boolean;
  readonly groupRoles: readonly GroupRole[];
  readonly externalIdClaim: string | null;
}

/** `<public URL>/scim/v2`: SERVICE_PUBLIC_URL, else the service's own URL (the tenant token issuer). */
export function scimBaseUrl(config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer'>): string {
  return `${serviceBaseUrl(config)}/scim/v2`;
}

/** Mints a token: the secret is in the result only. Event `scim_token.created`. */
export async function createScimToken(trx: Transaction, origin: EventOrigin, tenantId: string, description: string | null): Promise<ScimToken & { token: string }> {
  await lockScimTokens(trx, tenantId);
  if ((await countScimTokens(trx, tenantId)) >= MAX_SCIM_TOKENS) {
    throw new ApiError('conflict', `The tenant already has ${MAX_SCIM_TOKENS} SCIM tokens, the limit; revoke one first.`);
  }
  const token = SCIM_TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
  const row = await insertScimToken(trx, { tenantId, tokenHash: scimTokenHash(token), description });
  await recordEvent(trx, origin, { action: 'scim_token.created', tenantId, target: { type: 'scim_token', id: row.id }, data: { scim_token: { token_id: row.id, description: row.description } } });
  return { ...row, token };
}

export async function listScimTokens(trx: Transaction, tenantId: string): Promise<ScimToken[]> {
  return selectScimTokens(trx, tenantId);
}

/** Revokes a token (404 when the tenant has none with this id). Event `scim_token.revoked`. */
export async function revokeScimToken(trx: Transaction, origin: EventOrigin, tenantId: string, tokenId: string): Promise<void> {
  await lockScimTokens(trx, tenantId);
  const gone = await deleteScimToken(trx, tenantId, tokenId);
  if (!gone) throw new ApiError('notFound', `No SCIM token '${tokenId}' in this tenant.`);
  await recordEvent(trx, origin, { action: 'scim_token.revoked', tenantId, target: { type: 'scim_token', id: gone.id }, data: { scim_token: { token_id: gone.id, description: gone.description } } });
}

export async function getScimSettings(trx: Transaction, config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer'>, tenantId: string): Promise<ScimSettingsView> {
  const s = await selectDirectorySettings(trx, tenantId);
  return { baseUrl: scimBaseUrl(config), enabled: (await countScimTokens(trx, tenantId)) > 0, groupRoles: s.groupRoles, externalIdClaim: s.externalIdClaim };
}

/**
 * Changes the settings: every role of `group_roles` must be available in the tenant (400 naming
 * the first unknown). A change of `group_roles` recomputes every directory member's role.
 */
export async function updateScimSettings(
  trx: Transaction,
  config: Pick<Config, 'publicUrl' | 'tenantTokenIssuer'>,
  origin: EventOrigin,
  tenantId: string,
  input: { groupRoles?: readonly GroupRole[]; externalIdClaim?: string | null },
): Promise<ScimSettingsView> {
  await lockScimTokens(trx, tenantId);
  const before = await selectDirectorySettings(trx, tenantId);
  if (input.groupRoles) {
    const available = await selectRolePermissions(trx, tenantId);
    const unknown = input.groupRoles.find((m) => !available.has(m.role));
    if (unknown) throw new ApiError('validation', `group_roles: role '${unknown.role}' (for group '${unknown.group}') is not a role of this tenant.`);
  }
  const after: DirectorySettings = {
    groupRoles: input.groupRoles ? input.groupRoles.map((m) => ({ group: m.group, role: m.role })) : before.groupRoles,
    externalIdClaim: input.externalIdClaim !== undefined ? input.externalIdClaim : before.externalIdClaim,
  };
  await upsertDirectorySettings(trx, tenantId, after);
  const diff = changedFields({ group_roles: before.groupRoles, external_id_claim: before.externalIdClaim }, { group_roles: after.groupRoles, external_id_claim: after.externalIdClaim });
  if (Object.keys(diff.after).length > 0) {
    await recordEvent(trx, origin, { action: 'tenant.updated', tenantId, target: { type: 'tenant', id: tenantId }, data: { directory: diff } });
  }
  if (input.groupRoles && JSON.stringify(before.groupRoles) !== JSON.stringify(after.groupRoles)) await applyGroupRoles(trx, origin, tenantId, null);
  return getScimSettings(trx, config, tenantId);
}
