/**
 * SCIM resources (RFC 7643) as the service keeps them (docs/directory-sync.md#the-scim-api): a
 * directory user's `userName`, `externalId`, `name`, `displayName`, `emails`, `active`; a group's
 * `displayName`, `externalId`, `members`. Input is read leniently, the way directories send it
 * (Entra ID's `active: "True"`), and strictly where it is kept (lengths, types); other attributes
 * are accepted and not kept.
 */
import type { DirectoryUserFields, DirectoryUserRow } from '../../db/queries/directory-users';
import type { DirectoryGroupRow } from '../../db/queries/directory-groups';
import { invalid } from './errors';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const MAX_TEXT = 300;
const MAX_EMAILS = 20;
const NAME_PARTS = ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'] as const;

/** How emails and userNames are compared: trimmed, NFKC, lower-cased (the invitations' rule). */
export function emailKey(value: string): string {
  return value.trim().normalize('NFKC').toLowerCase();
}

type Json = Record<string, unknown>;

/** A key of `o` in any case (SCIM attribute names are case-insensitive). */
function field(o: Json, name: string): unknown {
  if (name in o) return o[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) return o[k];
  return undefined;
}

function text(o: Json, name: string, required: boolean): string | null {
  const v = field(o, name);
  if (v === undefined || v === null || v === '') {
    if (required) throw invalid('invalidValue', `'${name}' is required.`);
    return null;
  }
  if (typeof v !== 'string') throw invalid('invalidValue', `'${name}' must be a string.`);
  if (v.length > MAX_TEXT) throw invalid('invalidValue', `'${name}' is longer than ${MAX_TEXT} characters.`);
  if (required && v.trim() === '') throw invalid('invalidValue', `'${name}' must not be blank.`);
  return v;
}

/** `active` as a boolean: true, false, or Entra ID's strings "True" / "False" (any case). */
export function readActive(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  throw invalid('invalidValue', `'active' must be true or false, not ${JSON.stringify(v).slice(0, 50)}.`);
}

function readName(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid('invalidValue', "'name' must be an object.");
  const out: Record<string, string> = {};
  for (const part of NAME_PARTS) {
    const s = text(v as Json, part, false);
    if (s !== null) out[part] = s;
  }
  return out;
}

function readEmails(v: unknown): Array<{ value: string; type?: string; primary?: boolean }> {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid('invalidValue', "'emails' must be an array.");
  if (v.length > MAX_EMAILS) throw invalid('invalidValue', `At most ${MAX_EMAILS} emails.`);
  return v.map((e, i) => {
    if (!e || typeof e !== 'object' || Array.isArray(e)) throw invalid('invalidValue', `emails[${i}] must be an object.`);
    const value = text(e as Json, 'value', true)!;
    const type = text(e as Json, 'type', false);
    const primary = field(e as Json, 'primary');
    return { value, ...(type !== null ? { type } : {}), ...(primary === undefined ? {} : { primary: readActive(primary) }) };
  });
}

/** A SCIM User body (create, PUT, or the result of a PATCH) as the fields kept. */
export function readUser(body: unknown): DirectoryUserFields {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', 'The body must be a SCIM User object.');
  const o = body as Json;
  const userName = text(o, 'userName', true)!;
  const emails = readEmails(field(o, 'emails'));
  return {
    user_name: userName,
    user_name_key: emailKey(userName),
    external_id: text(o, 'externalId', false),
    display_name: text(o, 'displayName', false),
    name: readName(field(o, 'name')),
    emails,
    email_keys: [...new Set(emails.map((e) => emailKey(e.value)))],
    active: readActive(field(o, 'active')),
  };
}

/** A SCIM Group body's kept fields and its member ids (null: `members` absent). */
export function readGroup(body: unknown): { display_name: string; external_id: string | null; members: string[] | null } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', 'The body must be a SCIM Group object.');
  const o = body as Json;
  return { display_name: text(o, 'displayName', true)!, external_id: text(o, 'externalId', false), members: readMemberValues(field(o, 'members')) };
}

/** `[{value}]` → the values; null when absent. */
export function readMemberValues(v: unknown): string[] | null {
  if (v === undefined || v === null) return null;
  const list = Array.isArray(v) ? v : [v];
  return list.map((m, i) => {
    const value = m && typeof m === 'object' ? field(m as Json, 'value') : undefined;
    if (typeof value !== 'string' || value.length === 0 || value.length > 100) throw invalid('invalidValue', `members[${i}].value must be a directory user's id.`);
    return value;
  });
}

const iso = (d: Date) => d.toISOString();

/** A directory user as a SCIM User. */
export function toScimUser(r: DirectoryUserRow, base: string, groups?: ReadonlyArray<{ id: string; display_name: string }>): Json {
  return {
    schemas: [USER_SCHEMA],
    id: r.id,
    ...(r.external_id !== null ? { externalId: r.external_id } : {}),
    userName: r.user_name,
    ...(Object.keys(r.name).length ? { name: r.name } : {}),
    ...(r.display_name !== null ? { displayName: r.display_name } : {}),
    ...(r.emails.length ? { emails: r.emails } : {}),
    active: r.active,
    ...(groups ? { groups: groups.map((g) => ({ value: g.id, display: g.display_name, $ref: `${base}/Groups/${g.id}` })) } : {}),
    meta: { resourceType: 'User', created: iso(r.created_at), lastModified: iso(r.updated_at), location: `${base}/Users/${r.id}` },
  };
}

/** A directory group as a SCIM Group (`members` left out when not given). */
export function toScimGroup(r: DirectoryGroupRow, base: string, members?: ReadonlyArray<{ id: string; user_name: string }>): Json {
  return {
    schemas: [GROUP_SCHEMA],
    id: r.id,
    ...(r.external_id !== null ? { externalId: r.external_id } : {}),
    displayName: r.display_name,
    ...(members ? { members: members.map((m) => ({ value: m.id, display: m.user_name, $ref: `${base}/Users/${m.id}` })) } : {}),
    meta: { resourceType: 'Group', created: iso(r.created_at), lastModified: iso(r.updated_at), location: `${base}/Groups/${r.id}` },
  };
}

/** The attribute names of an `attributes` / `excludedAttributes` list, lower-cased, without a core schema prefix. */
export function attributeList(v: string | undefined): Set<string> {
  if (!v) return new Set();
  return new Set(
    v
      .split(',')
      .map((a) => a.trim().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '').split('.')[0]!.toLowerCase())
      .filter(Boolean),
  );
}

const ALWAYS = new Set(['id', 'schemas', 'meta']);

/** Applies `attributes` (only those, and id, schemas, meta) or `excludedAttributes` to a resource. */
export function project(resource: Json, attributes: Set<string>, excluded: Set<string>): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(resource)) {
    const key = k.toLowerCase();
    if (ALWAYS.has(key) || (attributes.size > 0 ? attributes.has(key) : !excluded.has(key))) out[k] = v;
  }
  return out;
}

/** Paging (RFC 7644): 1-based startIndex (below 1 is 1), count at most `max` (default `max`). */
export function paging(startIndex: number | undefined, count: number | undefined, max: number): { offset: number; limit: number; startIndex: number } {
  const start = startIndex === undefined || startIndex < 1 ? 1 : startIndex;
  const limit = count === undefined ? max : Math.max(0, Math.min(count, max));
  return { offset: start - 1, limit, startIndex: start };
}

export function listResponse(resources: Json[], total: number, startIndex: number): Json {
  return { schemas: [LIST_SCHEMA], totalResults: total, itemsPerPage: resources.length, startIndex, Resources: resources };
}
