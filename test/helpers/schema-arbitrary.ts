/**
 * fast-check arbitraries built from openapi.yaml's request schemas: `validBody` generates bodies
 * the schema accepts, `invalidBody` bodies it must refuse (one targeted violation each), so the
 * property tests follow the contract rather than a hand-written copy of it.
 */
import fc from 'fast-check';
import { loadOpenApiDocument } from '../../src/openapi-document';

export interface Schema {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  enum?: unknown[];
  minLength?: number;
  maxLength?: number;
  minProperties?: number;
  pattern?: string;
  format?: string;
  nullable?: boolean;
  allOf?: Schema[];
  oneOf?: Schema[];
}

const doc = loadOpenApiDocument() as { components: { schemas: Record<string, Schema> } };

/** A component schema with its $refs resolved (one level at a time, lazily). */
export function schemaOf(name: string): Schema {
  const s = doc.components.schemas[name];
  if (!s) throw new Error(`no schema ${name} in openapi.yaml`);
  return s;
}

function resolve(s: Schema): Schema {
  // `allOf` of one schema is how a property refers to a shared enum with its own default.
  if (s.allOf?.length === 1) return resolve(s.allOf[0]!);
  if (!s.$ref) return s;
  return resolve(schemaOf(s.$ref.replace('#/components/schemas/', '')));
}

const SLUG_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789-'.split('');
/**
 * Strings of any code points (emoji, RTL, combining marks, control characters) except U+0000,
 * which the service refuses everywhere (PostgreSQL cannot store it): see `withNul`.
 */
const anyText = (min: number, max: number) => fc.string({ unit: 'binary', minLength: min, maxLength: max }).filter((v) => !v.includes('\u0000'));
const hasNul = (v: unknown): boolean => JSON.stringify(v).includes('\\u0000');
/** JSON values without U+0000 in keys or strings. */
const jsonValue = (maxDepth: number) => fc.jsonValue({ maxDepth }).filter((v) => !hasNul(v));

function stringArb(s: Schema, unique: () => string): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 64, 300);
  if (s.enum) return fc.constantFrom(...(s.enum as string[]));
  if (s.format === 'email') {
    return fc.emailAddress().filter((e) => e.length <= (s.maxLength ?? 320));
  }
  if (s.pattern === '^[a-z0-9-]+$') {
    // Unique by construction (a random prefix), so a valid slug is never a 409 by accident.
    return fc
      .array(fc.constantFrom(...SLUG_CHARS), { minLength: 0, maxLength: Math.max(0, max - 20) })
      .map((cs) => `${unique()}${cs.join('')}`.slice(0, max));
  }
  if (s.pattern === '\\S') return anyText(min, max).filter((v) => /\S/.test(v));
  if (s.pattern === '^[a-z0-9][a-z0-9._-]*(:[a-z0-9][a-z0-9._-]*)*$') {
    // A permission key: lowercase segments joined by ':'.
    const segment = fc.array(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789._-'.split('')), { maxLength: 8 }).map((cs) => `a${cs.join('')}`);
    return fc.array(segment, { minLength: 1, maxLength: 3 }).map((ss) => ss.join(':').slice(0, max));
  }
  if (s.pattern) throw new Error(`no generator for pattern ${s.pattern}`);
  return anyText(min, max);
}

/** Bodies the schema accepts. `unique()` makes slugs that do not collide across runs. */
export function validBody(s0: Schema, unique: () => string, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(s0);
  // A choice of schemas told apart by a `type` enum (an SSO connection's OIDC or SAML form): any one of them.
  if (s.oneOf) return fc.oneof(...s.oneOf.map((branch) => validBody(branch, unique, depth)));
  switch (s.type) {
    case 'string':
      return stringArb(s, unique);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: 0, max: 1000 });
    case 'array':
      return fc.array(validBody(s.items ?? {}, unique, depth + 1), { maxLength: 5 });
    case 'object': {
      const props = s.properties ?? {};
      const known = Object.fromEntries(
        Object.entries(props).map(([k, v]) => {
          const arb = validBody(v, unique, depth + 1);
          // An identity link's id, unique like a slug, so a valid link is never a 409 by accident.
          return [k, k === 'organization_id' ? (arb as fc.Arbitrary<string>).map((id) => `${unique()}${id}`.slice(0, resolve(v).maxLength ?? 255)) : arb];
        }),
      );
      const requiredKeys = s.required ?? [];
      let record = fc.record(known, { requiredKeys }) as fc.Arbitrary<Record<string, unknown>>;
      if (s.minProperties) record = record.filter((r) => Object.keys(r).length >= s.minProperties!);
      if (s.additionalProperties === true) {
        // Free-form objects (settings, metadata): JSON values, a few levels deep, any keys.
        const extra = fc.dictionary(fc.string({ maxLength: 12 }), jsonValue(3), { maxKeys: 5 }).filter((d) => !hasNul(d));
        return fc.tuple(record, extra).map(([r, e]) => ({ ...e, ...r }));
      }
      return record;
    }
    default:
      return jsonValue(2);
  }
}

/** A value of the wrong JSON type for `s`. */
function wrongType(s: Schema): fc.Arbitrary<unknown> {
  const all: Array<[string, fc.Arbitrary<unknown>]> = [
    ['string', fc.string({ maxLength: 10 })],
    ['number', fc.double({ noNaN: true, noDefaultInfinity: true })],
    ['integer', fc.integer()],
    ['boolean', fc.boolean()],
    ['array', fc.array(fc.integer(), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 })],
    ['null', fc.constant(null)],
  ];
  const t = s.type ?? 'string';
  const bad = all.filter(([k]) => k !== t && !(t === 'number' && k === 'integer') && !(s.nullable && k === 'null')).map(([, a]) => a);
  return fc.oneof(...bad);
}

/** Ways to break one field of a valid body. */
function breakField(s0: Schema): fc.Arbitrary<unknown> {
  const s = resolve(s0);
  const options: Array<fc.Arbitrary<unknown>> = [wrongType(s)];
  if (s.type === 'string') {
    if (s.maxLength !== undefined) options.push(fc.constant('x'.repeat(s.maxLength + 1)));
    if (s.minLength) options.push(fc.constant(''));
    if (s.enum) options.push(fc.string({ maxLength: 12 }).filter((v) => !s.enum!.includes(v)));
    if (s.pattern === '^[a-z0-9-]+$') {
      options.push(
        fc
          .tuple(fc.string({ maxLength: 8 }), fc.constantFrom('A', '_', ' ', '.', '/', 'é', '\u0000', '😀', "'", '%'), fc.string({ maxLength: 8 }))
          .map(([a, c, b]) => `${a}${c}${b}`),
      );
    }
    if (s.format === 'email') options.push(fc.constantFrom('not-an-email', 'a@', '@b.example', 'a b@c.example', 'a@b@c.example'));
    if (s.pattern === '\\S') options.push(fc.constantFrom(' ', '\t\n', '   '));
    // U+0000 anywhere in a string is refused (documented: PostgreSQL cannot store it).
    if (!s.enum && s.format !== 'email') options.push(withNul(s));
  }
  if (s.type === 'object' && s.additionalProperties === true) {
    options.push(fc.constantFrom({ 'key\u0000': 1 }, { note: 'a\u0000b' }, { nested: { list: ['\u0000'] } }));
  }
  return fc.oneof(...options);
}

/** A string that would be valid but for one U+0000 inside it. */
function withNul(s: Schema): fc.Arbitrary<string> {
  const max = Math.max(1, Math.min(s.maxLength ?? 64, 64));
  return fc.tuple(fc.string({ maxLength: max - 1 }), fc.nat()).map(([v, i]) => {
    const at = i % (v.length + 1);
    return `${v.slice(0, at)}\u0000${v.slice(at)}`;
  });
}

/** Bodies the schema refuses: a valid body with one targeted violation, or not an object at all. */
export function invalidBody(s0: Schema, unique: () => string): fc.Arbitrary<unknown> {
  const s = resolve(s0);
  const props = s.properties ?? {};
  const base = validBody(s, unique) as fc.Arbitrary<Record<string, unknown>>;
  const breakers: Array<fc.Arbitrary<unknown>> = [
    // not an object
    fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }), fc.integer(), fc.boolean(), fc.constant(null)),
  ];
  for (const key of s.required ?? []) {
    breakers.push(
      base.map((b) => {
        const copy = { ...b };
        delete copy[key];
        return copy;
      }),
    );
  }
  for (const [key, sub] of Object.entries(props)) {
    breakers.push(fc.tuple(base, breakField(sub)).map(([b, v]) => ({ ...b, [key]: v })));
  }
  if (s.additionalProperties === false) {
    breakers.push(
      fc
        .tuple(base, fc.string({ minLength: 1, maxLength: 10 }).filter((k) => !(k in props) && k !== '__proto__'), fc.jsonValue({ maxDepth: 1 }))
        .map(([b, k, v]) => ({ ...b, [k]: v })),
    );
  }
  return fc.oneof(...breakers);
}
