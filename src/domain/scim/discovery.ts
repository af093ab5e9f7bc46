/**
 * SCIM discovery (RFC 7644 section 4): what this service provider supports, its resource types and the
 * schemas of its attributes, each also as a single resource at the `meta.location` it names
 * (docs/directory-sync.md#the-scim-api). The schemas are derived from the attribute tables of
 * ./attributes.ts, the same ones reading, writing, PATCH and filters use.
 */
import type { ScimResourceType, ScimResourceTypeList, ScimSchema, ScimSchemaAttribute, ScimSchemaList, ScimServiceProviderConfig } from '../../../generated/types.gen';
import { ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, GROUP_ATTRIBUTES, GROUP_SCHEMA, USER_ACCEPTED, USER_ATTRIBUTES, USER_SCHEMA, type SchemaText } from './attributes';
import { ScimError } from './errors';
import { listResponse } from './resources';
import { MAX_PAGE } from './users';

export function serviceProviderConfig(base: string): ScimServiceProviderConfig {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    documentationUri: 'https://github.com/tenant-service/tenant-service/blob/main/docs/directory-sync.md',
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_PAGE },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{ type: 'oauthbearertoken', name: 'SCIM token', description: 'A tenant SCIM token (scim_…) as a bearer token.', primary: true }],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  };
}

const RESOURCE_TYPES = [
  { id: 'User', endpoint: '/Users', description: 'A directory user: a member of the tenant.', schema: USER_SCHEMA, schemaExtensions: [{ schema: ENTERPRISE_SCHEMA, required: false }] },
  { id: 'Group', endpoint: '/Groups', description: 'A directory group: its members get the role group_roles maps it to.', schema: GROUP_SCHEMA, schemaExtensions: [] },
] as const;

function resourceType(base: string, t: (typeof RESOURCE_TYPES)[number]): ScimResourceType {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id: t.id,
    name: t.id,
    endpoint: t.endpoint,
    description: t.description,
    schema: t.schema,
    schemaExtensions: t.schemaExtensions.map((e) => ({ ...e })),
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/${t.id}` },
  };
}

export function resourceTypes(base: string): ScimResourceTypeList {
  return listResponse(
    RESOURCE_TYPES.map((t) => resourceType(base, t)),
    RESOURCE_TYPES.length,
    1,
  );
}

/** One resource type by name (case-insensitive, as SCIM names are); else 404. */
export function getResourceType(base: string, name: string): ScimResourceType {
  const t = RESOURCE_TYPES.find((x) => x.id.toLowerCase() === name.toLowerCase());
  if (!t) throw new ScimError('notFound', `No resource type '${name.slice(0, 100)}'; there are User and Group.`);
  return resourceType(base, t);
}

/** An attribute's schema text as RFC 7643 section 7 shows it, sub-attributes as a list. */
function attribute(name: string, s: SchemaText): ScimSchemaAttribute {
  const { subAttributes, ...rest } = s;
  return { name, ...rest, ...(subAttributes ? { subAttributes: Object.entries(subAttributes).map(([n, sub]) => attribute(n, sub)) } : {}) };
}

const SCHEMAS = [
  { id: USER_SCHEMA, name: 'User', description: 'A directory user: a member of the tenant.', attributes: { ...USER_ATTRIBUTES, ...Object.fromEntries(Object.entries(USER_ACCEPTED).map(([n, schema]) => [n, { schema }])) } },
  { id: GROUP_SCHEMA, name: 'Group', description: 'A directory group: its members get the role group_roles maps it to.', attributes: GROUP_ATTRIBUTES },
  { id: ENTERPRISE_SCHEMA, name: 'EnterpriseUser', description: 'The enterprise extension of a user: accepted and not kept.', attributes: Object.fromEntries(Object.entries(ENTERPRISE_ATTRIBUTES).map(([n, schema]) => [n, { schema }])) },
] as const;

function schema(base: string, s: (typeof SCHEMAS)[number]): ScimSchema {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: s.id,
    name: s.name,
    description: s.description,
    attributes: Object.entries(s.attributes as Readonly<Record<string, { schema: SchemaText }>>).map(([n, e]) => attribute(n, e.schema)),
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${s.id}` },
  };
}

export function schemas(base: string): ScimSchemaList {
  return listResponse(
    SCHEMAS.map((s) => schema(base, s)),
    SCHEMAS.length,
    1,
  );
}

/** One schema by its URN (case-insensitive); else 404. */
export function getSchema(base: string, urn: string): ScimSchema {
  const s = SCHEMAS.find((x) => x.id.toLowerCase() === urn.toLowerCase());
  if (!s) throw new ScimError('notFound', `No schema '${urn.slice(0, 200)}'.`);
  return schema(base, s);
}
