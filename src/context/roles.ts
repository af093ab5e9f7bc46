/**
 * Role keys (docs/roles.md): a member holds one role, named by its key. `admin` and `member` are
 * built-in platform roles; platform admins add more roles, and a tenant its own. A plain
 * constant module with no imports, so the console can read it too.
 */

/** A role's key (`^[a-z0-9-]+$`, 1–64): a built-in, platform or tenant role. */
export type RoleKey = string;

/** The built-in role that holds every system permission (docs/roles.md#system-permissions). */
export const ADMIN_ROLE: RoleKey = 'admin';
/** The built-in role every other member falls back to. */
export const MEMBER_ROLE: RoleKey = 'member';

/** A role key's pattern (the slug pattern, at most 64 characters). */
export const ROLE_KEY_PATTERN = /^[a-z0-9-]{1,64}$/;
/** A permission key: segments of `a-z 0-9 . _ -` joined by `:`, at most 100 characters. */
export const PERMISSION_KEY_PATTERN = /^[a-z0-9][a-z0-9._-]*(:[a-z0-9][a-z0-9._-]*)*$/;
export const PERMISSION_KEY_MAX = 100;
