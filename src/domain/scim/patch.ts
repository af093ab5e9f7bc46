/**
 * SCIM PATCH (RFC 7644) as directories send it, normalized before scim-patch applies it
 * (docs/directory-sync.md#microsoft-entra-id): Entra ID's capitalized ops, an op without
 * `path` whose value has dotted keys (`name.givenName`), paths with the core schema URN. Each
 * path is checked against the resource's attribute table (./attributes.ts): a path naming no
 * attribute is 400 `invalidPath`; one the client may not change (read-only, or removing an
 * attribute that is never unassigned) is 400 `mutability`; the attributes accepted and not kept
 * (the enterprise extension, phone numbers…) are dropped. `active` "True" / "False" is read when
 * the patched resource is read back (`readUser` of ./users.ts, `readGroup` of ./groups.ts).
 */
import { scimPatch, ScimError as LibraryScimError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { field, type SchemaTable, type SchemaText } from './attributes';
import { invalid, ScimError, type ScimType } from './errors';

export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** What a PATCH may name: the resource's attributes, those accepted and not kept, its extensions. */
export interface PatchSchema {
  readonly attributes: SchemaTable;
  readonly accepted: Readonly<Record<string, SchemaText>>;
  readonly extensions: Readonly<Record<string, Readonly<Record<string, SchemaText>>>>;
}

const mutability = (detail: string): ScimError => new ScimError('badRequest', detail, 'mutability');
const unknownPath = (path: string): ScimError => invalid('invalidPath', `'${path.slice(0, 100)}' names no attribute of this resource.`);

/** The entry of `name` in `table`, in any case. */
function entryOf<T>(table: Readonly<Record<string, T>>, name: string): [string, T] | null {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(table)) if (k.toLowerCase() === lower) return [k, v];
  return null;
}

/** Checks a sub-attribute against an attribute's schema; returns its schema. */
function subOf(path: string, schema: SchemaText, sub: string | undefined): SchemaText | null {
  if (sub === undefined) return null;
  const found = schema.subAttributes ? entryOf(schema.subAttributes, sub) : null;
  if (!found) throw unknownPath(path);
  return found[1];
}

const COMMON_READ_ONLY = new Set(['id', 'meta', 'schemas']);
const ATTRIBUTE_PATH = /^([A-Za-z][\w$-]*)(\[[^\]]+\])?(?:\.([A-Za-z][\w$-]*))?$/;

/**
 * Where a PATCH path (or a path-less value's key) lands: `keep` (an attribute the service keeps),
 * `drop` (accepted and not kept), or a refusal: unknown → `invalidPath`, not changeable →
 * `mutability`.
 */
export function targetOf(schema: PatchSchema, op: PatchOp['op'], path: string): 'keep' | 'drop' {
  if (/^urn:/i.test(path)) {
    for (const [urn, attributes] of Object.entries(schema.extensions)) {
      if (!path.toLowerCase().startsWith(urn.toLowerCase())) continue;
      const rest = path.slice(urn.length);
      if (rest === '') return 'drop';
      const m = rest.startsWith(':') ? ATTRIBUTE_PATH.exec(rest.slice(1)) : null;
      const found = m ? entryOf(attributes, m[1]!) : null;
      if (!found) throw unknownPath(path);
      subOf(path, found[1], m![3]);
      return 'drop';
    }
    throw invalid('invalidPath', `'${path.slice(0, 100)}' names a schema this resource does not have.`);
  }
  const m = ATTRIBUTE_PATH.exec(path);
  if (!m) throw unknownPath(path);
  const [, name, filter, sub] = m;
  // The common attributes (RFC 7643 section 3.1) are the service's: read-only.
  if (COMMON_READ_ONLY.has(name!.toLowerCase())) throw mutability(`'${name}' is read-only.`);
  const acceptedOnly = entryOf(schema.accepted, name!);
  if (acceptedOnly) {
    subOf(path, acceptedOnly[1], sub);
    return 'drop';
  }
  const found = entryOf(schema.attributes, name!);
  if (!found) throw unknownPath(path);
  const [canonical, entry] = found;
  if (filter && !entry.schema.multiValued) throw invalid('invalidPath', `'${canonical}' is single-valued: it takes no value filter.`);
  const subSchema = subOf(path, entry.schema, sub);
  if (entry.schema.mutability === 'readOnly' || subSchema?.mutability === 'readOnly') throw mutability(`'${path.slice(0, 100)}' is read-only.`);
  if (op === 'remove' && !filter && !sub && (entry.schema.required || entry.removable === false)) {
    throw mutability(`'${canonical}' cannot be removed${entry.schema.type === 'boolean' ? `; replace it with true or false` : ''}.`);
  }
  return 'keep';
}

export interface PatchOp {
  readonly op: 'add' | 'remove' | 'replace';
  readonly path?: string;
  readonly value?: unknown;
}

export const MAX_PATCH_OPERATIONS = 1000;
/** attr, attr.sub, attr[filter], attr[filter].sub, or a schema URN prefix (checked further by the library). */
const PATH = /^(urn:[^\s]+|[A-Za-z][\w$-]*(\[[^\]]+\])?(\.[A-Za-z][\w$-]*)?)$/;
const CORE_PREFIX = /^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i;

/**
 * Keys that name an object's prototype machinery, never a SCIM attribute: refused in a path and
 * anywhere in a value, so no PATCH can reach `Object.prototype` through the expansion below or
 * through scim-patch's own walk of the resource.
 */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const UNSAFE_IN_PATH = /(^|[.[])(__proto__|constructor|prototype)(?![\w$-])/;

/** The first key of `v` (at any depth, dotted parts included) that names prototype machinery; else null. */
function unsafeKeyIn(v: unknown): string | null {
  if (Array.isArray(v)) {
    for (const x of v) {
      const k = unsafeKeyIn(x);
      if (k !== null) return k;
    }
    return null;
  }
  if (v === null || typeof v !== 'object') return null;
  for (const [k, x] of Object.entries(v)) {
    if (k.split('.').some((part) => UNSAFE_KEYS.has(part))) return k;
    const inner = unsafeKeyIn(x);
    if (inner !== null) return inner;
  }
  return null;
}

/** Resource keys a path-less value may repeat without changing them (Okta sends the group's `id`). */
const IDENTITY_KEYS = new Set(['schemas', 'meta', 'id']);

/**
 * Expands `{"name.givenName": "A"}` into `{name: {givenName: "A"}}`, each key checked like a
 * path; drops the keys accepted and not kept. `id` stays, for checkUnchangedId.
 */
function expandDotted(value: Record<string, unknown>, schema: PatchSchema, op: PatchOp['op']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, v] of Object.entries(value)) {
    const key = rawKey.replace(CORE_PREFIX, '');
    if (IDENTITY_KEYS.has(key.toLowerCase())) {
      if (key.toLowerCase() === 'id') out.id = v;
      continue;
    }
    if (targetOf(schema, op, key) === 'drop') continue;
    const parts = key.split('.');
    // Attribute names are case-insensitive (RFC 7643 section 2.1): `{"DisplayName": …}` replaces `displayName`.
    parts[0] = entryOf(schema.attributes, parts[0]!)?.[0] ?? parts[0]!;
    let at = out;
    for (const p of parts.slice(0, -1)) {
      const next = at[p];
      at = (at[p] = next && typeof next === 'object' && !Array.isArray(next) ? next : {}) as Record<string, unknown>;
    }
    at[parts[parts.length - 1]!] = v;
  }
  return out;
}

/** Reads a PatchOp request body: its operations, normalized. Malformed → 400. */
export function readPatch(body: unknown, schema: PatchSchema): PatchOp[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw invalid('invalidSyntax', 'The body must be a SCIM PatchOp object.');
  const o = body as Record<string, unknown>;
  const schemas = o.schemas;
  if (schemas !== undefined && !(Array.isArray(schemas) && schemas.includes(PATCH_SCHEMA))) throw invalid('invalidSyntax', `'schemas' must list ${PATCH_SCHEMA}.`);
  const ops = o.Operations ?? o.operations;
  if (!Array.isArray(ops) || ops.length === 0) throw invalid('invalidSyntax', "'Operations' must be a non-empty array.");
  if (ops.length > MAX_PATCH_OPERATIONS) throw invalid('invalidValue', `At most ${MAX_PATCH_OPERATIONS} operations per PATCH.`);
  const out: PatchOp[] = [];
  ops.forEach((raw: unknown, i) => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw invalid('invalidSyntax', `Operations[${i}] must be an object.`);
    const r = raw as Record<string, unknown>;
    const op = typeof r.op === 'string' ? r.op.toLowerCase() : null;
    if (op !== 'add' && op !== 'remove' && op !== 'replace') throw invalid('invalidSyntax', `Operations[${i}].op must be add, remove or replace.`);
    if (r.path !== undefined && (typeof r.path !== 'string' || r.path.length === 0 || r.path.length > 500)) throw invalid('invalidPath', `Operations[${i}].path must be a SCIM path.`);
    const path = typeof r.path === 'string' ? r.path.trim().replace(CORE_PREFIX, '') : undefined;
    if (path !== undefined && (!PATH.test(path) || UNSAFE_IN_PATH.test(path))) throw invalid('invalidPath', `Operations[${i}].path '${path.slice(0, 100)}' is not a SCIM attribute path.`);
    const unsafe = unsafeKeyIn(r.value);
    if (unsafe !== null) throw invalid('invalidValue', `Operations[${i}].value has the key '${unsafe.slice(0, 100)}', which is not a SCIM attribute.`);
    if (path === undefined) {
      if (op === 'remove') throw invalid('noTarget', `Operations[${i}]: remove needs a path.`);
      if (!r.value || typeof r.value !== 'object' || Array.isArray(r.value)) throw invalid('invalidValue', `Operations[${i}]: an op without path needs an object value.`);
      out.push({ op, value: expandDotted(r.value as Record<string, unknown>, schema, op) });
      return;
    }
    // The enterprise extension and the other attributes accepted are not kept.
    if (targetOf(schema, op, path) === 'drop') return;
    if (op !== 'remove' && r.value === undefined) throw invalid('invalidValue', `Operations[${i}]: ${op} needs a value.`);
    out.push({ op, path, ...(r.value !== undefined ? { value: r.value } : {}) });
  });
  return out;
}

/**
 * A path-less value may name the resource's own `id` (Okta does); any other id is 400
 * `mutability`. Returns the ops without it.
 */
export function checkUnchangedId(ops: readonly PatchOp[], id: string): PatchOp[] {
  return ops.map((o) => {
    if (o.path !== undefined || !o.value || typeof o.value !== 'object') return o;
    const v = o.value as Record<string, unknown>;
    const given = field(v, 'id');
    if (given === undefined) return o;
    if (given !== id) throw mutability("'id' is read-only.");
    const { id: _id, ...rest } = v;
    return { op: o.op, value: rest };
  });
}

/** Applies `ops` to a resource with scim-patch; its refusals become SCIM 400s. */
export function applyPatch<T extends Record<string, unknown>>(resource: T, ops: readonly PatchOp[]): Record<string, unknown> {
  if (ops.length === 0) return resource;
  try {
    return scimPatch(resource as unknown as ScimResource, ops as unknown as ScimPatchOperation[], { mutateDocument: false, treatMissingAsAdd: true }) as unknown as Record<string, unknown>;
  } catch (err) {
    if (err instanceof LibraryScimError) {
      const code = err.scimCode === 'noTarget' ? 'noTarget' : 'invalidPath';
      throw invalid(code as ScimType, err.message.slice(0, 300));
    }
    // The library's own type errors on values it cannot walk (a path through a string).
    if (err instanceof TypeError) throw invalid('invalidPath', 'The path does not name an attribute of this resource.');
    throw err;
  }
}
