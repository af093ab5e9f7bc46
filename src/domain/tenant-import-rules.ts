/**
 * The role rules an import keeps, as the API keeps them (docs/roles.md,
 * docs/operations.md#moving-a-tenant-between-deployments): a tenant's own role never has a
 * platform role's key, every role a member, an invitation, a directory user or a group mapping
 * holds exists (a platform role or one of the file's tenant roles), and every permission of the
 * file's roles is in this deployment's catalogue. The import collects what the file names as it
 * streams, leaves out the role-permission rows whose permission the catalogue lacks (so the
 * database does not stop at the first), and at the end refuses the file naming every fault:
 * the transaction rolls back, nothing is written.
 */
import { lockPermissionUse, lockRoleKeys, selectPlatformRoles, unknownPermissions } from '../db/queries/roles';
import type { Transaction } from '../db/tenant-scope';
import { ApiError } from '../errors';

/** How many names of one kind the refusal lists (the rest are counted): the catalogue's own limit (docs/roles.md#limits). */
const NAMED = 500;

interface Held {
  readonly line: number;
  readonly by: string;
}

export class ImportRoleRules {
  /** The file's tenant roles: key → line. */
  private readonly tenantRoles = new Map<string, number>();
  /** Role keys held: key → first holder. */
  private readonly held = new Map<string, Held>();
  /** Permissions of the file's tenant roles: key → first line. */
  private readonly permissions = new Map<string, number>();
  /** Permissions found missing from the catalogue. */
  private readonly missing = new Set<string>();
  /** Permissions found in the catalogue. */
  private readonly known = new Set<string>();

  /** Notes what a row names; `line` is its line in the file. */
  see(table: string, row: Record<string, unknown>, line: number): void {
    const hold = (role: unknown, by: string) => {
      if (typeof role === 'string' && !this.held.has(role)) this.held.set(role, { line, by });
    };
    switch (table) {
      case 'tenant_roles':
        if (typeof row.key === 'string' && !this.tenantRoles.has(row.key)) this.tenantRoles.set(row.key, line);
        break;
      case 'tenant_role_permissions':
        if (typeof row.permission_key === 'string' && !this.permissions.has(row.permission_key)) this.permissions.set(row.permission_key, line);
        break;
      case 'users':
        hold(row.role, 'a member');
        break;
      case 'invitations':
        hold(row.role, 'an invitation');
        break;
      case 'directory_users':
        hold(row.role, 'a directory user');
        break;
      case 'directory_settings':
        if (Array.isArray(row.group_roles)) {
          for (const m of row.group_roles as unknown[]) if (m && typeof m === 'object') hold((m as { role?: unknown }).role, 'a group mapping (group_roles)');
        }
        break;
      default:
    }
  }

  /**
   * The rows of a tenant_role_permissions batch whose permission the catalogue holds; the others
   * are remembered as missing (the import is refused at its end).
   */
  async keepKnownPermissions(trx: Transaction, rows: Record<string, unknown>[]): Promise<boolean[]> {
    await lockPermissionUse(trx, false);
    const keys = [...new Set(rows.map((r) => r.permission_key).filter((k): k is string => typeof k === 'string'))].filter((k) => !this.known.has(k) && !this.missing.has(k));
    for (const k of await unknownPermissions(trx, keys)) this.missing.add(k);
    for (const k of keys) if (!this.missing.has(k)) this.known.add(k);
    return rows.map((r) => typeof r.permission_key !== 'string' || !this.missing.has(r.permission_key));
  }

  /**
   * Throws a 400 naming every fault, or returns. Locks the role keys until the transaction ends,
   * so no platform role takes one of the file's tenant role keys before the import commits.
   */
  async check(trx: Transaction): Promise<void> {
    await lockRoleKeys(trx);
    const platform = new Set((await selectPlatformRoles(trx)).map((r) => r.key));
    const faults: string[] = [];
    const clashes = [...this.tenantRoles].filter(([key]) => platform.has(key));
    if (clashes.length > 0) {
      faults.push(`tenant role(s) keyed like a platform role, which would give their permissions to every holder of the platform role: ${list(clashes.map(([k, line]) => `'${k}' (line ${line})`))}; rename them in the source deployment`);
    }
    const nowhere = [...this.held].filter(([key]) => !platform.has(key) && !this.tenantRoles.has(key));
    if (nowhere.length > 0) {
      faults.push(`role(s) held but existing neither as a platform role here nor as one of the file's tenant roles: ${list(nowhere.map(([k, h]) => `'${k}' (${h.by}, line ${h.line})`))}`);
    }
    const missing = [...this.missing].sort();
    if (missing.length > 0) {
      faults.push(
        `permission(s) of the file's roles missing from this deployment's catalogue: ${list(missing.map((k) => `'${k}' (line ${this.permissions.get(k) ?? '?'})`))}; ` +
          'the catalogue is the operator\'s: create these permissions first (POST /api/setup/permissions, or `tenantctl permissions create <key>`), then import again',
      );
    }
    if (faults.length > 0) throw new ApiError('badRequest', `The file breaks the role rules of this deployment; nothing was imported. ${faults.map((f, i) => `(${i + 1}) ${f}.`).join(' ')}`);
  }
}

function list(names: string[]): string {
  const shown = names.slice(0, NAMED).join(', ');
  return names.length > NAMED ? `${shown} and ${names.length - NAMED} more` : shown;
}
