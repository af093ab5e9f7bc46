/**
 * Directory groups through SCIM (docs/directory-sync.md#groups-give-roles). Members are
 * changed set-based (a group may hold 100 000 people, a PATCH up to 1 000 member operations);
 * `displayName` and `externalId` go through scim-patch like a user's attributes. Every change
 * recomputes the roles of the people it concerns in the same transaction.
 */
import {
  addGroupMembers,
  countDirectoryGroups,
  deleteDirectoryGroup,
  displayNameTaken,
  insertDirectoryGroup,
  memberIdsOfGroup,
  membersOfGroups,
  pageDirectoryGroups,
  removeGroupMembers,
  selectDirectoryGroup,
  unknownDirectoryUsers,
  updateDirectoryGroup,
} from '../../db/queries/directory-groups';
import { lockDirectory } from '../../db/queries/directory-users';
import { applyGroupRoles } from '../directory-roles';
import { recordEvent } from '../events';
import type { ScimGroup, ScimGroupList } from '../../../generated/types.gen';
import { field, GROUP_ATTRIBUTES, GROUP_SCHEMA, readGroupFields, readMemberValues, showGroup } from './attributes';
import { invalid, ScimError } from './errors';
import { groupFilter } from './filter';
import { applyPatch, checkUnchangedId, readPatch, type PatchOp, type PatchSchema } from './patch';
import { attributeList, listResponse, paging, project } from './resources';
import { MAX_PAGE, type ListQuery, type ScimScope } from './users';
import type { DirectoryGroup, DirectoryGroupFields } from '../../context/records';

/** A SCIM Group body's kept fields and its member ids (null: `members` absent). */
export function readGroup(body: unknown): DirectoryGroupFields & { members: string[] | null } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', 'The body must be a SCIM Group object.');
  return { ...readGroupFields(body as Record<string, unknown>), members: readMemberValues(field(body as Record<string, unknown>, 'members')) };
}

/** A directory group as a SCIM Group (`members` left out when not given). */
export function toScimGroup(r: DirectoryGroup, base: string, members?: ReadonlyArray<{ id: string; user_name: string }>): ScimGroup {
  return {
    schemas: [GROUP_SCHEMA],
    id: r.id,
    ...showGroup({ row: r, base, ...(members ? { members } : {}) }),
    meta: { resourceType: 'Group', created: r.created_at.toISOString(), lastModified: r.updated_at.toISOString(), location: `${base}/Groups/${r.id}` },
  };
}

/** Directory groups per tenant, at most. */
export const MAX_DIRECTORY_GROUPS = 1_000;
/** Member values one PATCH may name, at most. */
export const MAX_MEMBER_OPERATIONS = 1_000;

/** What a group's PATCH may name (./patch.ts): its attributes; no extension. */
const GROUP_PATCH: PatchSchema = { attributes: GROUP_ATTRIBUTES, accepted: {}, extensions: {} };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MEMBER_FILTER = /^members\[\s*value\s+eq\s+"([^"]{1,100})"\s*\]$/i;

async function found(s: ScimScope, id: string, forUpdate: boolean): Promise<DirectoryGroup> {
  const row = UUID.test(id) ? await selectDirectoryGroup(s.trx, s.tenantId, id, forUpdate) : null;
  if (!row) throw new ScimError('notFound', `No group '${id.slice(0, 100)}' in this directory.`);
  return row;
}

async function withMembers(s: ScimScope, g: DirectoryGroup): Promise<ScimGroup> {
  return toScimGroup(g, s.base, (await membersOfGroups(s.trx, s.tenantId, [g.id])).get(g.id) ?? []);
}

async function assertNameFree(s: ScimScope, displayName: string, exceptId: string | null): Promise<void> {
  if (await displayNameTaken(s.trx, s.tenantId, displayName, exceptId)) throw new ScimError('conflict', `displayName '${displayName.slice(0, 100)}' is taken in this directory.`, 'uniqueness');
}

async function assertKnown(s: ScimScope, ids: readonly string[]): Promise<void> {
  const unknown = await unknownDirectoryUsers(s.trx, s.tenantId, ids);
  if (unknown.length) throw invalid('invalidValue', `members: '${unknown[0]!.slice(0, 100)}' is not a user of this directory${unknown.length > 1 ? ` (and ${unknown.length - 1} more)` : ''}.`);
}

const groupData = (g: DirectoryGroup) => ({ group: { id: g.id, display_name: g.display_name, external_id: g.external_id } });

export async function listGroups(s: ScimScope, q: ListQuery): Promise<ScimGroupList> {
  const where = groupFilter(q.filter);
  const page = paging(q.startIndex, q.count, MAX_PAGE);
  const { rows, total } = await pageDirectoryGroups(s.trx, s.tenantId, where, page.offset, page.limit);
  const attributes = attributeList(q.attributes);
  const excluded = attributeList(q.excludedAttributes);
  const wantMembers = attributes.size > 0 ? attributes.has('members') : !excluded.has('members');
  const members = wantMembers ? await membersOfGroups(s.trx, s.tenantId, rows.map((r) => r.id)) : null;
  return listResponse(
    rows.map((r) => project(toScimGroup(r, s.base, members ? (members.get(r.id) ?? []) : undefined), attributes, excluded)),
    total,
    page.startIndex,
  );
}

export async function getGroup(s: ScimScope, id: string, q: Pick<ListQuery, 'attributes' | 'excludedAttributes'>): Promise<ScimGroup> {
  const attributes = attributeList(q.attributes);
  const excluded = attributeList(q.excludedAttributes);
  const g = await found(s, id, false);
  const wantMembers = attributes.size > 0 ? attributes.has('members') : !excluded.has('members');
  return project(wantMembers ? await withMembers(s, g) : toScimGroup(g, s.base), attributes, excluded);
}

/** Creates a group with its members. Event `group.created`. */
export async function createGroup(s: ScimScope, body: unknown): Promise<ScimGroup> {
  const g = readGroup(body);
  const members = g.members ?? [];
  if (members.length > MAX_MEMBER_OPERATIONS) throw invalid('invalidValue', `At most ${MAX_MEMBER_OPERATIONS} members in one request; add the rest with PATCH.`);
  await lockDirectory(s.trx, s.tenantId);
  if ((await countDirectoryGroups(s.trx, s.tenantId)) >= MAX_DIRECTORY_GROUPS) throw new ScimError('conflict', `The directory already holds ${MAX_DIRECTORY_GROUPS} groups, the limit.`, null);
  await assertNameFree(s, g.display_name, null);
  await assertKnown(s, members);
  const row = await insertDirectoryGroup(s.trx, s.tenantId, { display_name: g.display_name, external_id: g.external_id });
  const added = await addGroupMembers(s.trx, s.tenantId, row.id, members);
  await recordEvent(s.trx, s.origin, { action: 'group.created', tenantId: s.tenantId, target: { type: 'group', id: row.id }, data: { ...groupData(row), members_added: added.length } });
  await applyGroupRoles(s.trx, s.origin, s.tenantId, added);
  return withMembers(s, row);
}

interface MemberChange {
  /** Replace every member by these (null: no replace). */
  replace: string[] | null;
  add: string[];
  /** Remove these; null: remove all. */
  remove: string[] | null;
}

/** Splits a PATCH into the member operations (set-based) and the rest (scim-patch). */
function splitMemberOps(ops: readonly PatchOp[]): { members: MemberChange[]; other: PatchOp[]; count: number } {
  const members: MemberChange[] = [];
  const other: PatchOp[] = [];
  let count = 0;
  for (const op of ops) {
    const path = op.path?.toLowerCase();
    if (path === undefined) {
      const { members: m, ...rest } = Object.fromEntries(Object.entries(op.value as Record<string, unknown>).map(([k, v]) => [k.toLowerCase() === 'members' ? 'members' : k, v])) as Record<string, unknown>;
      if (m !== undefined) {
        const values = readMemberValues(m) ?? [];
        count += values.length;
        members.push(op.op === 'replace' ? { replace: values, add: [], remove: [] } : { replace: null, add: values, remove: [] });
      }
      if (Object.keys(rest).length) other.push({ op: op.op, value: rest });
      continue;
    }
    const filtered = MEMBER_FILTER.exec(op.path!);
    if (filtered) {
      if (op.op !== 'remove') throw invalid('invalidPath', `'${op.path}' may only be removed; add members with path "members".`);
      count += 1;
      members.push({ replace: null, add: [], remove: [filtered[1]!] });
      continue;
    }
    if (path === 'members') {
      const values = op.value === undefined ? null : (readMemberValues(op.value) ?? []);
      count += values?.length ?? 1;
      if (op.op === 'remove') members.push({ replace: null, add: [], remove: values });
      else if (op.op === 'replace') members.push({ replace: values ?? [], add: [], remove: [] });
      else members.push({ replace: null, add: values ?? [], remove: [] });
      continue;
    }
    if (path.startsWith('members')) throw invalid('invalidPath', `The path '${op.path}' is not supported; use "members" or members[value eq "<id>"].`);
    other.push(op);
  }
  return { members, other, count };
}

/** Applies member changes in order; returns who was added and removed (net of each other). */
async function changeMembers(s: ScimScope, groupId: string, changes: readonly MemberChange[]): Promise<{ added: Set<string>; removed: Set<string> }> {
  const added = new Set<string>();
  const removed = new Set<string>();
  const note = (a: string[], r: string[]) => {
    for (const id of r) {
      if (!added.delete(id)) removed.add(id);
    }
    for (const id of a) {
      if (!removed.delete(id)) added.add(id);
    }
  };
  for (const c of changes) {
    if (c.replace !== null) {
      await assertKnown(s, c.replace);
      const keep = new Set(c.replace.map((x) => x.toLowerCase()));
      const current = await memberIdsOfGroup(s.trx, s.tenantId, groupId);
      const r = await removeGroupMembers(s.trx, s.tenantId, groupId, current.filter((x) => !keep.has(x)));
      note(await addGroupMembers(s.trx, s.tenantId, groupId, c.replace), r);
    }
    if (c.add.length) {
      await assertKnown(s, c.add);
      note(await addGroupMembers(s.trx, s.tenantId, groupId, c.add), []);
    }
    if (c.remove === null || c.remove.length) note([], await removeGroupMembers(s.trx, s.tenantId, groupId, c.remove));
  }
  return { added, removed };
}

/** Writes name changes and member changes, records `group.updated`, recomputes roles. */
async function write(s: ScimScope, before: DirectoryGroup, fields: { display_name: string; external_id: string | null }, changes: readonly MemberChange[]): Promise<DirectoryGroup> {
  const renamed = fields.display_name !== before.display_name;
  if (renamed) await assertNameFree(s, fields.display_name, before.id);
  const after = renamed || fields.external_id !== before.external_id ? await updateDirectoryGroup(s.trx, s.tenantId, before.id, fields) : before;
  const { added, removed } = await changeMembers(s, before.id, changes);
  if (after !== before || added.size || removed.size) {
    await recordEvent(s.trx, s.origin, {
      action: 'group.updated',
      tenantId: s.tenantId,
      target: { type: 'group', id: before.id },
      data: { ...groupData(after), ...(renamed ? { before: { display_name: before.display_name }, after: { display_name: after.display_name } } : {}), members_added: added.size, members_removed: removed.size },
    });
  }
  // A rename can change every member's role (group_roles name groups by displayName).
  await applyGroupRoles(s.trx, s.origin, s.tenantId, renamed ? [...new Set([...(await memberIdsOfGroup(s.trx, s.tenantId, before.id)), ...removed])] : [...added, ...removed]);
  return after;
}

/** PUT: the whole group, members included (absent members: none). */
export async function replaceGroup(s: ScimScope, id: string, body: unknown): Promise<ScimGroup> {
  const g = readGroup(body);
  if ((g.members?.length ?? 0) > MAX_MEMBER_OPERATIONS) throw invalid('invalidValue', `At most ${MAX_MEMBER_OPERATIONS} members in one request; add the rest with PATCH.`);
  const before = await found(s, id, true);
  const after = await write(s, before, { display_name: g.display_name, external_id: g.external_id }, [{ replace: g.members ?? [], add: [], remove: [] }]);
  return withMembers(s, after);
}

export async function patchGroup(s: ScimScope, id: string, body: unknown): Promise<ScimGroup> {
  const ops = readPatch(body, GROUP_PATCH);
  const before = await found(s, id, true);
  const { members, other, count } = splitMemberOps(checkUnchangedId(ops, before.id));
  if (count > MAX_MEMBER_OPERATIONS) throw invalid('invalidValue', `At most ${MAX_MEMBER_OPERATIONS} member operations per PATCH.`);
  const patched = readGroup(applyPatch(toScimGroup(before, s.base), other));
  const after = await write(s, before, { display_name: patched.display_name, external_id: patched.external_id }, members);
  return withMembers(s, after);
}

/** DELETE: its members' roles follow at once. Event `group.deleted`. */
export async function deleteGroup(s: ScimScope, id: string): Promise<void> {
  const g = await found(s, id, true);
  const members = await memberIdsOfGroup(s.trx, s.tenantId, g.id);
  await deleteDirectoryGroup(s.trx, s.tenantId, g.id);
  await recordEvent(s.trx, s.origin, { action: 'group.deleted', tenantId: s.tenantId, target: { type: 'group', id: g.id }, data: { ...groupData(g), members: members.length } });
  await applyGroupRoles(s.trx, s.origin, s.tenantId, members);
}
