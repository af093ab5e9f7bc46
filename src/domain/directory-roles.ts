/**
 * Roles from directory groups (docs/directory-sync.md#groups-give-roles). A directory-driven
 * role change skips the last-admin rule (the directory is the source of truth for its people)
 * and is a `member.role_changed` event.
 */
import { recomputeDirectoryRoles } from '../db/queries/directory-roles';
import type { Transaction } from '../db/tenant-scope';
import { recordEvent, type EventOrigin } from './events';

/** Recomputes the roles of the directory users named (all when null) and records each change. */
export async function applyGroupRoles(trx: Transaction, origin: EventOrigin, tenantId: string, memberIds: readonly string[] | null): Promise<number> {
  if (memberIds !== null && memberIds.length === 0) return 0;
  const changes = await recomputeDirectoryRoles(trx, tenantId, memberIds);
  for (const c of changes) {
    await recordEvent(trx, origin, {
      action: 'member.role_changed',
      tenantId,
      target: { type: 'member', id: c.user_id },
      data: { member: { user_id: c.user_id, directory_user_id: c.directory_user_id, role: c.after }, before: { role: c.before }, after: { role: c.after }, source: 'directory_groups' },
    });
  }
  return changes.length;
}
