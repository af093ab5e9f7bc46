/**
 * src/domain/scim/attributes.ts against openapi.yaml: the contract validates what the tables
 * read (every attribute a table reads or accepts is a typed property of the input schemas, none
 * of them left to `additionalProperties: true`, the enterprise extension declared), and shows
 * what they show (docs/architecture-operations.md#adding-a-scim-attribute).
 */
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'js-yaml';
import { ENTERPRISE_ATTRIBUTES, ENTERPRISE_SCHEMA, GROUP_ATTRIBUTES, USER_ACCEPTED, USER_ATTRIBUTES } from '../../src/domain/scim/attributes';

type Schema = { type?: string; $ref?: string; anyOf?: unknown[]; allOf?: unknown[]; properties?: Record<string, Schema>; additionalProperties?: unknown; items?: Schema };
const doc = yaml.load(fs.readFileSync(path.join(__dirname, '..', '..', 'openapi.yaml'), 'utf8')) as { components: { schemas: Record<string, Schema> } };
const schemas = doc.components.schemas;
const typed = (s: Schema | undefined) => s !== undefined && (s.type !== undefined || s.$ref !== undefined || s.anyOf !== undefined || s.allOf !== undefined);
const writable = (table: Record<string, { schema: { mutability: string } }>) => Object.entries(table).filter(([, e]) => e.schema.mutability !== 'readOnly').map(([n]) => n);

it.each(['ScimUserInput', 'ScimGroupInput', 'ScimPatchRequest', 'ScimUser', 'ScimGroup', 'ScimListResponse', 'ScimServiceProviderConfig'])('%s declares its attributes (no additionalProperties: true)', (name) => {
  expect(schemas[name]!.additionalProperties).not.toBe(true);
  expect(Object.keys(schemas[name]!.properties ?? {}).length).toBeGreaterThan(0);
});

it('every User attribute the table reads or accepts is a typed property of ScimUserInput; the enterprise extension is declared', () => {
  const input = schemas.ScimUserInput!.properties!;
  for (const name of [...writable(USER_ATTRIBUTES), ...Object.keys(USER_ACCEPTED)]) expect({ name, typed: typed(input[name]) }).toEqual({ name, typed: true });
  expect(input[ENTERPRISE_SCHEMA]).toEqual({ $ref: '#/components/schemas/ScimEnterpriseUser' });
  expect(Object.keys(schemas.ScimEnterpriseUser!.properties!).sort()).toEqual(Object.keys(ENTERPRISE_ATTRIBUTES).sort());
});

it('every Group attribute the table reads is a typed property of ScimGroupInput', () => {
  const input = schemas.ScimGroupInput!.properties!;
  for (const name of writable(GROUP_ATTRIBUTES)) expect({ name, typed: typed(input[name]) }).toEqual({ name, typed: true });
});

it('the replies show exactly what the tables show', () => {
  const shown = (name: string) => Object.keys(schemas[name]!.properties!).filter((k) => !['schemas', 'id', 'meta'].includes(k));
  expect(shown('ScimUser').sort()).toEqual(Object.keys(USER_ATTRIBUTES).sort());
  expect(shown('ScimGroup').sort()).toEqual(Object.keys(GROUP_ATTRIBUTES).sort());
  expect(Object.keys(schemas.ScimName!.properties!)).toEqual(Object.keys(USER_ATTRIBUTES.name.schema.subAttributes!));
  expect(Object.keys(schemas.ScimMemberRef!.properties!)).toEqual(Object.keys(GROUP_ATTRIBUTES.members.schema.subAttributes!));
});
