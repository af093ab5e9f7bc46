/**
 * SCIM discovery (RFC 7644): what this service provider supports, its resource types and
 * the schemas of the attributes it keeps (docs/directory-sync.md#the-scim-api).
 */
import { GROUP_SCHEMA, listResponse, USER_SCHEMA } from './resources';
import { MAX_PAGE } from './users';

type Json = Record<string, unknown>;

export function serviceProviderConfig(base: string): Json {
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

export function resourceTypes(base: string): Json {
  const types = [
    { schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'], id: 'User', name: 'User', endpoint: '/Users', schema: USER_SCHEMA, meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` } },
    { schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'], id: 'Group', name: 'Group', endpoint: '/Groups', schema: GROUP_SCHEMA, meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` } },
  ];
  return listResponse(types, types.length, 1);
}

const attr = (name: string, type: string, extra: Json = {}): Json => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

export function schemas(base: string): Json {
  const user = {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: USER_SCHEMA,
    name: 'User',
    description: 'A directory user: a member of the tenant.',
    attributes: [
      attr('userName', 'string', { required: true, uniqueness: 'server' }),
      attr('externalId', 'string', { caseExact: true }),
      attr('name', 'complex', { subAttributes: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'].map((n) => attr(n, 'string')) }),
      attr('displayName', 'string'),
      attr('emails', 'complex', { multiValued: true, subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')] }),
      attr('active', 'boolean'),
      attr('groups', 'complex', { multiValued: true, mutability: 'readOnly', subAttributes: [attr('value', 'string'), attr('display', 'string')] }),
    ],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${USER_SCHEMA}` },
  };
  const group = {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: GROUP_SCHEMA,
    name: 'Group',
    description: 'A directory group: its members get the role group_roles maps it to.',
    attributes: [
      attr('displayName', 'string', { required: true, uniqueness: 'server' }),
      attr('externalId', 'string', { caseExact: true }),
      attr('members', 'complex', { multiValued: true, subAttributes: [attr('value', 'string', { mutability: 'immutable' }), attr('display', 'string', { mutability: 'readOnly' })] }),
    ],
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${GROUP_SCHEMA}` },
  };
  return listResponse([user, group], 2, 1);
}
