/**
 * Directory users through SCIM (docs/directory-sync.md#leavers-leave-at-once). members of
 * the tenant from the directory, bound to a person at their first sign-in. Deactivation and
 * deletion take effect at the member's very next request: they write rows whose triggers notify
 * the decision facts, in the same transaction as their event.
 */
import {
  countDirectoryUsers,
  deleteDirectoryUser,
  groupsOfUsers,
  insertDirectoryUser,
  lockDirectory,
  pageDirectoryUsers,
  selectDirectoryUser,
  updateDirectoryUser,
  userNameTaken,
} from '../../db/queries/directory-users';
import { markRemoved } from '../../db/queries/member-removals';
import { deleteMember, lockMemberForDelete } from '../../db/queries/members';
import type { Transaction } from '../../db/tenant-scope';
import { recordEvent, type EventOrigin } from '../events';
import { revokeInvitationsSentBy } from '../invitations';
import type { ScimUser, ScimUserList } from '../../../generated/types.gen';
import { changedColumns, ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, field, readUserFields, showUser, USER_ACCEPTED, USER_ATTRIBUTES, USER_SCHEMA } from './attributes';
import { invalid, ScimError } from './errors';
import { userFilter } from './filter';
import { applyPatch, checkUnchangedId, readPatch, type PatchSchema } from './patch';
import { attributeList, listResponse, paging, project } from './resources';
import type { DirectoryUser, DirectoryUserFields } from '../../context/records';

/** A SCIM User body (create, PUT, or the result of a PATCH) as the fields kept (./attributes.ts reads them). */
export function readUser(body: unknown): DirectoryUserFields {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', 'The body must be a SCIM User object.');
  return readUserFields(body as Record<string, unknown>);
}

/** A directory user as a SCIM User (`groups` left out when not given). */
export function toScimUser(r: DirectoryUser, base: string, groups?: ReadonlyArray<{ id: string; display_name: string }>): ScimUser {
  return {
    schemas: [USER_SCHEMA],
    id: r.id,
    ...showUser({ row: r, base, ...(groups ? { groups } : {}) }),
    meta: { resourceType: 'User', created: r.created_at.toISOString(), lastModified: r.updated_at.toISOString(), location: `${base}/Users/${r.id}` },
  };
}

/** Directory users per tenant, at most. */
export const MAX_DIRECTORY_USERS = 100_000;
/** A list page holds at most this many resources. */
export const MAX_PAGE = 200;

export interface ScimScope {
  readonly trx: Transaction;
  readonly origin: EventOrigin;
  readonly tenantId: string;
  /** `<base URL>/scim/v2`, for `meta.location`. */
  readonly base: string;
}

/** What a user's PATCH may name (./patch.ts). */
const USER_PATCH: PatchSchema = { attributes: USER_ATTRIBUTES, accepted: USER_ACCEPTED, extensions: { [ENTERPRISE_SCHEMA]: ENTERPRISE_ATTRIBUTES } };

/** A list's query: the GET's parameters, or a `/.search` body (attribute lists as arrays). */
export interface ListQuery {
  readonly filter?: string;
  readonly startIndex?: number;
  readonly count?: number;
  readonly attributes?: string | readonly string[];
  readonly excludedAttributes?: string | readonly string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function notFound(id: string): ScimError {
  return new ScimError('notFound', `No user '${id.slice(0, 100)}' in this directory.`);
}

async function found(s: ScimScope, id: string, forUpdate: boolean): Promise<DirectoryUser> {
  const row = UUID.test(id) ? await selectDirectoryUser(s.trx, s.tenantId, id, forUpdate) : null;
  if (!row) throw notFound(id);
  return row;
}

function eventData(r: DirectoryUser): Record<string, unknown> {
  return { member: { directory_user_id: r.id, user_id: r.user_id, user_name: r.user_name, external_id: r.external_id, display_name: r.display_name, active: r.active } };
}

async function withGroups(s: ScimScope, r: DirectoryUser): Promise<ScimUser> {
  return toScimUser(r, s.base, (await groupsOfUsers(s.trx, s.tenantId, [r.id])).get(r.id) ?? []);
}

async function assertUserNameFree(s: ScimScope, f: DirectoryUserFields, exceptId: string | null): Promise<void> {
  if (await userNameTaken(s.trx, s.tenantId, f.user_name_key, exceptId)) throw new ScimError('conflict', `userName '${f.user_name.slice(0, 100)}' is taken in this directory.`, 'uniqueness');
}

export async function listUsers(s: ScimScope, q: ListQuery): Promise<ScimUserList> {
  const where = userFilter(q.filter);
  const page = paging(q.startIndex, q.count, MAX_PAGE);
  const { rows, total } = page.limit === 0 ? { rows: [], total: (await pageDirectoryUsers(s.trx, s.tenantId, where, 0, 1)).total } : await pageDirectoryUsers(s.trx, s.tenantId, where, page.offset, page.limit);
  const attributes = attributeList(q.attributes);
  const excluded = attributeList(q.excludedAttributes);
  const wantGroups = attributes.size > 0 ? attributes.has('groups') : !excluded.has('groups');
  const groups = wantGroups ? await groupsOfUsers(s.trx, s.tenantId, rows.map((r) => r.id)) : null;
  return listResponse(
    rows.map((r) => project(toScimUser(r, s.base, groups ? (groups.get(r.id) ?? []) : undefined), attributes, excluded)),
    total,
    page.startIndex,
  );
}

export async function getUser(s: ScimScope, id: string, q: Pick<ListQuery, 'attributes' | 'excludedAttributes'>): Promise<ScimUser> {
  return project(await withGroups(s, await found(s, id, false)), attributeList(q.attributes), attributeList(q.excludedAttributes));
}

/** Creates a directory user: 409 `uniqueness` for a taken userName. Event `member.provisioned`. */
export async function createUser(s: ScimScope, body: unknown): Promise<ScimUser> {
  const f = readUser(body);
  await lockDirectory(s.trx, s.tenantId);
  if ((await countDirectoryUsers(s.trx, s.tenantId)) >= MAX_DIRECTORY_USERS) throw new ScimError('conflict', `The directory already holds ${MAX_DIRECTORY_USERS} users, the limit.`, null);
  await assertUserNameFree(s, f, null);
  const row = await insertDirectoryUser(s.trx, s.tenantId, f);
  await recordEvent(s.trx, s.origin, { action: 'member.provisioned', tenantId: s.tenantId, target: { type: 'directory_user', id: row.id }, data: { ...eventData(row), source: 'directory' } });
  // A user just made is in no group yet.
  return toScimUser(row, s.base, []);
}

/** Writes the new fields and records what changed: updated, and deactivated or reactivated. */
async function write(s: ScimScope, before: DirectoryUser, f: DirectoryUserFields): Promise<DirectoryUser> {
  // A write that changes nothing (a PATCH of attributes accepted and not kept) leaves the row as it is.
  if (changedColumns(before, f).length === 0) return before;
  if (f.user_name_key !== before.user_name_key) await assertUserNameFree(s, f, before.id);
  const after = await updateDirectoryUser(s.trx, s.tenantId, before.id, f);
  const target = { type: 'directory_user', id: after.id };
  // `active` has events of its own.
  const changed = changedColumns(before, after, ['active']);
  if (changed.length) await recordEvent(s.trx, s.origin, { action: 'member.updated', tenantId: s.tenantId, target, data: { ...eventData(after), changed } });
  if (before.active !== after.active) {
    await recordEvent(s.trx, s.origin, { action: after.active ? 'member.reactivated' : 'member.deactivated', tenantId: s.tenantId, target, data: eventData(after) });
  }
  return after;
}

/** PUT: the whole user (attributes not sent are cleared, except `active`, kept when not sent); `active: false` deactivates. */
export async function replaceUser(s: ScimScope, id: string, body: unknown): Promise<ScimUser> {
  const f = readUser(body);
  const before = await found(s, id, true);
  // `active` left out is not asserted (RFC 7644 section 3.5.1) and keeps its value: a replace
  // never reactivates a user its directory deactivated (docs/directory-sync.md#leavers-leave-at-once).
  const asserted = field(body as Record<string, unknown>, 'active') !== undefined;
  return withGroups(s, await write(s, before, asserted ? f : { ...f, active: before.active }));
}

/** PATCH, through scim-patch on the user as SCIM shows it, then read back like a PUT. */
export async function patchUser(s: ScimScope, id: string, body: unknown): Promise<ScimUser> {
  const ops = readPatch(body, USER_PATCH);
  const before = await found(s, id, true);
  const patched = applyPatch(toScimUser(before, s.base), checkUnchangedId(ops, before.id));
  return withGroups(s, await write(s, before, readUser(patched)));
}

/**
 * DELETE: the directory user goes, and with it the membership it is bound to; the removal
 * sticks (a claim or linked id never makes the person a member again). The directory is the
 * source of truth for its people: the last-admin rule does not hold it back. Event `member.removed`.
 */
export async function deleteUser(s: ScimScope, id: string): Promise<void> {
  const row = await found(s, id, true);
  let member: { issuer: string; subject: string } | null = null;
  if (row.user_id) {
    const locked = await lockMemberForDelete(s.trx, s.tenantId, row.user_id);
    if (locked) {
      member = { issuer: locked.issuer, subject: locked.subject };
      await revokeInvitationsSentBy(s.trx, s.origin, s.tenantId, locked.userId);
      await deleteMember(s.trx, s.tenantId, locked.userId);
      await markRemoved(s.trx, s.tenantId, member, 'deprovisioned');
    }
  }
  await deleteDirectoryUser(s.trx, s.tenantId, row.id);
  await recordEvent(s.trx, s.origin, {
    action: 'member.removed',
    tenantId: s.tenantId,
    target: { type: 'directory_user', id: row.id },
    data: { ...eventData(row), ...(member ? { issuer: member.issuer, subject: member.subject } : {}), source: 'directory' },
  });
}
