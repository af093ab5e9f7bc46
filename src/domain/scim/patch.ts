/**
 * SCIM PATCH (RFC 7644) as directories send it, normalized before scim-patch applies it
 * (docs/directory-sync.md#microsoft-entra-id): Entra ID's capitalized ops, an op without
 * `path` whose value has dotted keys (`name.givenName`), paths with the core schema URN; the
 * enterprise extension and other attributes the service does not keep are dropped. `active`
 * "True" / "False" is read when the patched resource is read back (./resources.ts).
 */
import { scimPatch, ScimError as LibraryScimError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { invalid, type ScimType } from './errors';
import { PATCH_SCHEMA } from './resources';

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

/** Expands `{"name.givenName": "A"}` into `{name: {givenName: "A"}}`; drops extension (`urn:`) keys. */
function expandDotted(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [rawKey, v] of Object.entries(value)) {
    const key = rawKey.replace(CORE_PREFIX, '');
    if (key.toLowerCase().startsWith('urn:')) continue;
    const parts = key.split('.');
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
export function readPatch(body: unknown): PatchOp[] {
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
    // The enterprise extension and other schemas' attributes are not kept.
    if (path !== undefined && path.toLowerCase().startsWith('urn:')) return;
    if (path === undefined) {
      if (op === 'remove') throw invalid('noTarget', `Operations[${i}]: remove needs a path.`);
      if (!r.value || typeof r.value !== 'object' || Array.isArray(r.value)) throw invalid('invalidValue', `Operations[${i}]: an op without path needs an object value.`);
      out.push({ op, value: expandDotted(r.value as Record<string, unknown>) });
      return;
    }
    if (op !== 'remove' && r.value === undefined) throw invalid('invalidValue', `Operations[${i}]: ${op} needs a value.`);
    out.push({ op, path, ...(r.value !== undefined ? { value: r.value } : {}) });
  });
  return out;
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
