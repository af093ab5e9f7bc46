/**
 * SCIM resources (RFC 7643) as the service keeps them (docs/directory-sync.md#the-scim-api), read
 * and shown through the attribute tables of ./attributes.ts. Input is read leniently, the way
 * directories send it (Entra ID's `active: "True"`, names in any case), and strictly where it is
 * kept (lengths, types); other attributes are accepted and not kept.
 */
import type { ScimGroup, ScimListResponse, ScimUser } from '../../../generated/types.gen';


import { field, GROUP_SCHEMA, readGroupFields, readMemberValues, readUserFields, showGroup, showUser, USER_SCHEMA } from './attributes';
import { invalid } from './errors';
import type { DirectoryGroup, DirectoryGroupFields, DirectoryUser, DirectoryUserFields } from '../../context/records';

export { emailKey, readMemberValues, GROUP_SCHEMA, USER_SCHEMA } from './attributes';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

type Json = Record<string, unknown>;

/** A SCIM User body (create, PUT, or the result of a PATCH) as the fields kept. */
export function readUser(body: unknown): DirectoryUserFields {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', 'The body must be a SCIM User object.');
  return readUserFields(body as Json);
}

/** A SCIM Group body's kept fields and its member ids (null: `members` absent). */
export function readGroup(body: unknown): DirectoryGroupFields & { members: string[] | null } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', 'The body must be a SCIM Group object.');
  return { ...readGroupFields(body as Json), members: readMemberValues(field(body as Json, 'members')) };
}

const iso = (d: Date) => d.toISOString();

/** A directory user as a SCIM User (`groups` left out when not given). */
export function toScimUser(r: DirectoryUser, base: string, groups?: ReadonlyArray<{ id: string; display_name: string }>): ScimUser {
  return {
    schemas: [USER_SCHEMA],
    id: r.id,
    ...showUser({ row: r, base, ...(groups ? { groups } : {}) }),
    meta: { resourceType: 'User', created: iso(r.created_at), lastModified: iso(r.updated_at), location: `${base}/Users/${r.id}` },
  };
}

/** A directory group as a SCIM Group (`members` left out when not given). */
export function toScimGroup(r: DirectoryGroup, base: string, members?: ReadonlyArray<{ id: string; user_name: string }>): ScimGroup {
  return {
    schemas: [GROUP_SCHEMA],
    id: r.id,
    ...showGroup({ row: r, base, ...(members ? { members } : {}) }),
    meta: { resourceType: 'Group', created: iso(r.created_at), lastModified: iso(r.updated_at), location: `${base}/Groups/${r.id}` },
  };
}

/**
 * The attribute names of an `attributes` / `excludedAttributes` list (a query's comma-separated
 * string or a search body's array), lower-cased, without a core schema prefix.
 */
export function attributeList(v: string | readonly string[] | undefined): Set<string> {
  if (!v) return new Set();
  const names = typeof v === 'string' ? v.split(',') : v.flatMap((x) => x.split(','));
  return new Set(names.map((a) => a.trim().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '').split('.')[0]!.toLowerCase()).filter(Boolean));
}

const ALWAYS = new Set(['id', 'schemas', 'meta']);

/** Applies `attributes` (only those, and id, schemas, meta) or `excludedAttributes` to a resource. */
export function project<T extends ScimUser | ScimGroup>(resource: T, attributes: Set<string>, excluded: Set<string>): T {
  const out: Json = {};
  for (const [k, v] of Object.entries(resource)) {
    const key = k.toLowerCase();
    if (ALWAYS.has(key) || (attributes.size > 0 ? attributes.has(key) : !excluded.has(key))) out[k] = v;
  }
  // The same resource with optional attributes left out; id, schemas and meta always stay.
  return out as T;
}

/** Paging (RFC 7644): 1-based startIndex (below 1 is 1), count at most `max` (default `max`). */
export function paging(startIndex: number | undefined, count: number | undefined, max: number): { offset: number; limit: number; startIndex: number } {
  const start = startIndex === undefined || startIndex < 1 ? 1 : startIndex;
  const limit = count === undefined ? max : Math.max(0, Math.min(count, max));
  return { offset: start - 1, limit, startIndex: start };
}

export function listResponse<T>(resources: T[], total: number, startIndex: number): ScimListResponse & { Resources: T[] } {
  return { schemas: [LIST_SCHEMA], totalResults: total, itemsPerPage: resources.length, startIndex, Resources: resources };
}
