/**
 * What SCIM lists share (RFC 7644, docs/directory-sync.md#the-scim-api): paging, the list
 * response, and `attributes` / `excludedAttributes`. A User and a Group are read and shown where
 * they are written (./users.ts, ./groups.ts), from the attribute tables of ./attributes.ts.
 */
import type { ScimGroup, ScimListResponse, ScimUser } from '../../../generated/types.gen';

export { emailKey, readMemberValues, GROUP_SCHEMA, USER_SCHEMA } from './attributes';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const SEARCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

type Json = Record<string, unknown>;

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
