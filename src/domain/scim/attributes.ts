/**
 * The SCIM attributes, declared once (docs/architecture-operations.md#adding-a-scim-attribute): per
 * attribute its schema text (type, mutability, returned, uniqueness, sub-attributes), the columns
 * it is kept in, how it is read from a body and shown from a row, and what a filter compares it
 * by. Reading and showing a resource (./users.ts, ./groups.ts), PATCH (./patch.ts), filters (./filter.ts),
 * `/Schemas` (./discovery.ts) and the change diff (./users.ts) are all derived from these tables.
 *
 * The tables are keyed by the generated types of openapi.yaml: an attribute the contract shows
 * without an entry, an entry the contract does not show, or a kept column no entry writes fails
 * to compile.
 */
import type { ScimEnterpriseUser, ScimGroup, ScimMemberRef, ScimSchemaAttribute, ScimUser, ScimUserInput } from '../../../generated/types.gen';
import type { ColumnKind, GroupColumn, UserColumn } from '../../db/queries/directory-filter';


import { invalid } from './errors';
import type { DirectoryGroup, DirectoryGroupFields, DirectoryUser, DirectoryUserFields } from '../../context/records';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const ENTERPRISE_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

type Json = Record<string, unknown>;

/** An attribute's schema text (RFC 7643 section 7), sub-attributes by name. */
export interface SchemaText extends Omit<ScimSchemaAttribute, 'name' | 'subAttributes'> {
  readonly subAttributes?: Readonly<Record<string, SchemaText>>;
}

const MAX_TEXT = 300;
const MAX_EMAILS = 20;

// ---- schema text helpers --------------------------------------------------------------------

const base = (type: SchemaText['type'], description: string, o: Partial<SchemaText> = {}): SchemaText => ({
  type,
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...o,
});
const str = (description: string, o: Partial<SchemaText> = {}) => base('string', description, o);
/** Accepted in a body or PATCH and not kept: never returned (RFC 7643 section 7, `writeOnly`). */
const accepted = (type: SchemaText['type'], description: string, o: Partial<SchemaText> = {}) => base(type, `${description} Accepted and not kept.`, { mutability: 'writeOnly', returned: 'never', ...o });
const multi = (description: string, subs: readonly string[] = ['value', 'display', 'type', 'primary']): SchemaText =>
  accepted('complex', description, { multiValued: true, subAttributes: Object.fromEntries(subs.map((s) => [s, accepted(s === 'primary' ? 'boolean' : 'string', `The ${s}.`)])) });

// ---- reading a body -------------------------------------------------------------------------

/** A key of `o` in any case (SCIM attribute names are case-insensitive). */
export function field(o: Json, name: string): unknown {
  if (Object.prototype.hasOwnProperty.call(o, name)) return o[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) return o[k];
  return undefined;
}

function readText(v: unknown, name: string, required: boolean): string | null {
  if (v === undefined || v === null || v === '') {
    if (required) throw invalid('invalidValue', `'${name}' is required.`);
    return null;
  }
  if (typeof v !== 'string') throw invalid('invalidValue', `'${name}' must be a string.`);
  if (v.length > MAX_TEXT) throw invalid('invalidValue', `'${name}' is longer than ${MAX_TEXT} characters.`);
  if (required && v.trim() === '') throw invalid('invalidValue', `'${name}' must not be blank.`);
  return v;
}

/** A boolean: true, false, or Entra ID's strings "True" / "False" (any case); absent is `absent`. */
export function readBoolean(v: unknown, name: string, absent: boolean): boolean {
  if (v === undefined || v === null) return absent;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  throw invalid('invalidValue', `'${name}' must be true or false, not ${JSON.stringify(v).slice(0, 50)}.`);
}

/** How emails and userNames are compared: trimmed, NFKC, lower-cased (the invitations' rule). */
export function emailKey(value: string): string {
  return value.trim().normalize('NFKC').toLowerCase();
}

// ---- filters --------------------------------------------------------------------------------

/** What a filter compares an attribute (or a sub-attribute) by: a column of the kind its type needs. */
export interface FilterTarget<C extends string> {
  readonly column: C;
  /** The kind of column, which decides the operators (strings: all; booleans, ids: eq ne pr). */
  readonly kind: ColumnKind;
  readonly caseExact: boolean;
  /** Folds a compared value as the column holds it (userName and emails: their keys). */
  readonly fold?: (v: string) => string;
  /** Kept in an object column: compared under the attribute's name (./filter.ts sets it). */
  readonly key?: string;
}
const on = <C extends string>(column: C, kind: ColumnKind, caseExact: boolean, fold?: (v: string) => string): FilterTarget<C> => ({ column, kind, caseExact, ...(fold ? { fold } : {}) });

// ---- entries --------------------------------------------------------------------------------

/** A kept attribute: its schema, the columns it is kept in, how it is read and shown. */
export interface Kept<View, Value, Fields, F extends keyof Fields, C extends string> {
  readonly schema: SchemaText;
  /** The columns it is kept in: their change is this attribute's change (the event's `changed`). */
  readonly fields: readonly F[];
  /** Reads its value from a body (undefined when absent) into its columns; `name` is its key in the table. */
  readonly set: (v: unknown, name: string) => Pick<Fields, F>;
  /** Its value as SCIM shows it; undefined when unassigned. */
  readonly get: (view: View, name: string) => Value | undefined;
  /** By sub-path ('' for the attribute itself): what a filter compares it by. */
  readonly filter: Readonly<Record<string, FilterTarget<C>>>;
  /** False: it can never be unassigned (a PATCH `remove` of it is 400 `mutability`). */
  readonly removable: boolean;
}
/** A read-only attribute: shown, never written (a body's value is ignored, a PATCH of it refused). */
export interface Shown<View, Value> {
  readonly schema: SchemaText;
  readonly get: (view: View, name: string) => Value | undefined;
}

/** Any entry of a table, as the derived readers walk it. */
type AnyEntry<View, Fields> =
  | { readonly schema: SchemaText; readonly fields: readonly (keyof Fields)[]; readonly set: (v: unknown, name: string) => Partial<Fields>; readonly get: (view: View, name: string) => unknown; readonly removable: boolean }
  | Shown<View, unknown>;

/** A user as SCIM shows it: its row, the base URL, and its groups when they were read. */
export interface UserView {
  readonly row: DirectoryUser;
  readonly base: string;
  readonly groups?: ReadonlyArray<{ id: string; display_name: string }>;
}
/** A group as SCIM shows it: its row, the base URL, and its members when they were read. */
export interface GroupView {
  readonly row: DirectoryGroup;
  readonly base: string;
  readonly members?: ReadonlyArray<{ id: string; user_name: string }>;
}

const kept = <View, Fields>() => <Value, F extends keyof Fields, C extends string>(e: Kept<View, Value, Fields, F, C>) => e;
const keptUser = kept<UserView, DirectoryUserFields>();
const keptGroup = kept<GroupView, DirectoryGroupFields>();

/** A text kept in the user's `attributes` under its own name: no column of its own (docs/architecture-operations.md). */
const textInAttributes = (description: string) =>
  keptUser<string, 'attributes', UserColumn>({
    schema: str(description),
    fields: ['attributes'],
    set: (v, name) => ({ attributes: ((text) => (text === null ? {} : { [name]: text }))(readText(v, name, false)) }),
    get: (u, name) => u.row.attributes[name],
    filter: { '': { column: 'attributes', kind: 'text', caseExact: false, key: '' } },
    removable: true,
  });

const NAME_PARTS = ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'] as const;

function readName(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid('invalidValue', "'name' must be an object.");
  const out: Record<string, string> = {};
  for (const part of NAME_PARTS) {
    const s = readText(field(v as Json, part), part, false);
    if (s !== null) out[part] = s;
  }
  return out;
}

function readEmails(v: unknown): DirectoryUserFields['emails'] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid('invalidValue', "'emails' must be an array.");
  if (v.length > MAX_EMAILS) throw invalid('invalidValue', `At most ${MAX_EMAILS} emails.`);
  return v.map((e, i) => {
    if (!e || typeof e !== 'object' || Array.isArray(e)) throw invalid('invalidValue', `emails[${i}] must be an object.`);
    const value = readText(field(e as Json, 'value'), 'value', true)!;
    const type = readText(field(e as Json, 'type'), 'type', false);
    const primary = field(e as Json, 'primary');
    return { value, ...(type !== null ? { type } : {}), ...(primary === undefined ? {} : { primary: readBoolean(primary, 'primary', false) }) };
  });
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

const ref = (description: string, o: Partial<SchemaText> = {}) => str(description, { mutability: 'readOnly', ...o });
const refSubs = (type: string, display: string, refType: string): Record<string, SchemaText> => ({
  value: str(`The ${type}'s id.`, { mutability: 'immutable', caseExact: true }),
  display: ref(display),
  $ref: base('reference', `The URI of the ${type}.`, { mutability: 'readOnly', referenceTypes: [refType], caseExact: true }),
  type: ref(`The kind of ${type}.`, { canonicalValues: refType === 'User' ? ['User'] : ['direct'] }),
});

/** The User attributes the service keeps, keyed by the contract's `ScimUser`. */
export const USER_ATTRIBUTES = {
  userName: keptUser({
    schema: str('Unique identifier for the user; compared trimmed, NFKC, case-insensitively.', { required: true, uniqueness: 'server' }),
    fields: ['user_name', 'user_name_key'],
    set: (v) => {
      const userName = readText(v, 'userName', true)!;
      return { user_name: userName, user_name_key: emailKey(userName) };
    },
    get: (u) => u.row.user_name,
    filter: { '': on<UserColumn>('user_name_key', 'text', true, emailKey) },
    removable: false,
  }),
  externalId: keptUser({
    schema: str("The directory's own identifier of the user.", { caseExact: true }),
    fields: ['external_id'],
    set: (v) => ({ external_id: readText(v, 'externalId', false) }),
    get: (u) => u.row.external_id ?? undefined,
    filter: { '': on<UserColumn>('external_id', 'text', true) },
    removable: true,
  }),
  name: keptUser({
    schema: base('complex', "The components of the user's name.", { subAttributes: Object.fromEntries(NAME_PARTS.map((n) => [n, str(`The ${n} of the name.`)])) }),
    fields: ['name'],
    set: (v) => ({ name: readName(v) }),
    get: (u) => (Object.keys(u.row.name).length ? u.row.name : undefined),
    filter: {},
    removable: true,
  }),
  displayName: keptUser({
    schema: str('The name of the user, suitable for display.'),
    fields: ['display_name'],
    set: (v) => ({ display_name: readText(v, 'displayName', false) }),
    get: (u) => u.row.display_name ?? undefined,
    filter: { '': on<UserColumn>('display_name', 'text', false) },
    removable: true,
  }),
  nickName: textInAttributes('A casual name.'),
  title: textInAttributes("The user's title."),
  userType: textInAttributes('The kind of user (Employee, Contractor…).'),
  preferredLanguage: textInAttributes('The preferred language (an Accept-Language value such as `en-US`).'),
  locale: textInAttributes('The locale (such as `en-US`).'),
  timezone: textInAttributes('The time zone (an IANA name such as `Europe/Berlin`).'),
  emails: keptUser({
    schema: base('complex', 'Email addresses of the user (at most 20).', {
      multiValued: true,
      subAttributes: { value: str('The address.'), type: str('work, home, other…', { canonicalValues: ['work', 'home', 'other'] }), primary: base('boolean', 'The primary address.') },
    }),
    fields: ['emails', 'email_keys'],
    set: (v) => {
      const emails = readEmails(v);
      return { emails, email_keys: [...new Set(emails.map((e) => emailKey(e.value)))] };
    },
    get: (u) => (u.row.emails.length ? u.row.emails : undefined),
    filter: { '': on<UserColumn>('email_keys', 'textArray', true, emailKey), value: on<UserColumn>('email_keys', 'textArray', true, emailKey) },
    removable: true,
  }),
  active: keptUser({
    schema: base('boolean', 'Whether the user may sign in; false refuses their next request (docs/directory-sync.md).'),
    fields: ['active'],
    set: (v) => ({ active: readBoolean(v, 'active', true) }),
    get: (u) => u.row.active,
    filter: { '': on<UserColumn>('active', 'boolean', true) },
    removable: false,
  }),
  groups: {
    schema: base('complex', 'The groups the user is a member of (read-only: change a group\'s members).', { multiValued: true, mutability: 'readOnly', subAttributes: refSubs('group', "The group's displayName.", 'Group') }),
    get: (u): ScimMemberRef[] | undefined => u.groups?.map((g) => ({ value: g.id, display: g.display_name, $ref: `${u.base}/Groups/${g.id}`, type: 'direct' })),
  },
} satisfies UserAttributeTable;

/** The other User attributes of RFC 7643 the contract accepts: typed, accepted, not kept. */
export const USER_ACCEPTED = {
  profileUrl: accepted('reference', 'A URI of the user\'s profile.'),
  password: accepted('string', 'A password (the service signs nobody in by password).'),
  phoneNumbers: multi('Phone numbers.'),
  ims: multi('Instant messaging addresses.'),
  photos: multi('Photo URLs.'),
  addresses: multi('Addresses.', ['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country', 'type', 'primary']),
  entitlements: multi('Entitlements.'),
  roles: multi('Roles (the service gives roles by group: docs/directory-sync.md#groups-give-roles).'),
  x509Certificates: multi('Certificates.'),
} satisfies { readonly [K in Exclude<keyof ScimUserInput, keyof ScimUser | typeof ENTERPRISE_SCHEMA>]: SchemaText };

/** The enterprise extension's attributes (RFC 7643 section 4.3): accepted, not kept. */
export const ENTERPRISE_ATTRIBUTES = {
  employeeNumber: accepted('string', 'The employee number.'),
  costCenter: accepted('string', 'The cost center.'),
  organization: accepted('string', 'The organization.'),
  division: accepted('string', 'The division.'),
  department: accepted('string', 'The department.'),
  manager: accepted('complex', "The user's manager.", { subAttributes: { value: accepted('string', "The manager's id."), $ref: accepted('reference', "The manager's URI."), displayName: accepted('string', "The manager's name.") } }),
} satisfies { readonly [K in keyof ScimEnterpriseUser]-?: SchemaText };

/** The Group attributes the service keeps, keyed by the contract's `ScimGroup`. */
export const GROUP_ATTRIBUTES = {
  displayName: keptGroup({
    schema: str('The name of the group; group_roles name groups by it.', { required: true, uniqueness: 'server' }),
    fields: ['display_name'],
    set: (v) => ({ display_name: readText(v, 'displayName', true)! }),
    get: (g) => g.row.display_name,
    filter: { '': on<GroupColumn>('display_name', 'text', false) },
    removable: false,
  }),
  externalId: keptGroup({
    schema: str("The directory's own identifier of the group.", { caseExact: true }),
    fields: ['external_id'],
    set: (v) => ({ external_id: readText(v, 'externalId', false) }),
    get: (g) => g.row.external_id ?? undefined,
    filter: { '': on<GroupColumn>('external_id', 'text', true) },
    removable: true,
  }),
  // Written set-based by ./groups.ts (a group may hold 100 000 people), read by readMemberValues.
  members: {
    schema: base('complex', 'The members of the group: directory users.', { multiValued: true, subAttributes: refSubs('user', "The user's userName.", 'User') }),
    get: (g): ScimMemberRef[] | undefined => g.members?.map((m) => ({ value: m.id, display: m.user_name, $ref: `${g.base}/Users/${m.id}`, type: 'User' })),
  },
} satisfies { readonly [K in Exclude<keyof ScimGroup, 'schemas' | 'id' | 'meta'>]: Kept<GroupView, ScimGroup[K], DirectoryGroupFields, keyof DirectoryGroupFields, GroupColumn> | Shown<GroupView, ScimGroup[K]> };

/** The attributes every resource has (RFC 7643 section 3.1): read-only, filterable. */
export const COMMON_FILTERS = {
  id: on('id', 'uuid', true),
  'meta.created': on('created_at', 'timestamp', true),
  'meta.lastmodified': on('updated_at', 'timestamp', true),
} as const satisfies Record<string, FilterTarget<UserColumn & GroupColumn>>;

// ---- compile-time checks --------------------------------------------------------------------

type FieldsOf<T> = T extends { fields: readonly (infer F)[] } ? F : never;
type Unwritten<Table, Fields> = Exclude<keyof Fields, FieldsOf<Table[keyof Table]>>;
/** `true` when every column of `Fields` is written by an entry of `Table`; else the unwritten columns. */
export type EveryColumnWritten<Table, Fields> = [Unwritten<Table, Fields>] extends [never] ? true : Unwritten<Table, Fields>;
/** What the User table must be: an entry per attribute `ScimUser` shows, typed by it. */
export type UserAttributeTable = { readonly [K in Exclude<keyof ScimUser, 'schemas' | 'id' | 'meta'>]: Kept<UserView, ScimUser[K], DirectoryUserFields, keyof DirectoryUserFields, UserColumn> | Shown<UserView, ScimUser[K]> };
/** Every kept column of a user is written by some entry (else this fails to compile). */
const _everyUserColumn: EveryColumnWritten<typeof USER_ATTRIBUTES, DirectoryUserFields> = true;
const _everyGroupColumn: EveryColumnWritten<typeof GROUP_ATTRIBUTES, DirectoryGroupFields> = true;
void [_everyUserColumn, _everyGroupColumn];

// ---- derived readers and writers ------------------------------------------------------------

export type UserTable = typeof USER_ATTRIBUTES;
export type GroupTable = typeof GROUP_ATTRIBUTES;

/** Reads a body's kept attributes (any case) into the columns; read-only and accepted ones are ignored. */
function readFields<View, Fields>(table: Readonly<Record<string, AnyEntry<View, Fields>>>, o: Json): Fields {
  const out: Partial<Fields> = {};
  for (const [name, e] of Object.entries(table)) {
    if (!('set' in e)) continue;
    for (const [column, value] of Object.entries(e.set(field(o, name), name))) {
      (out as Json)[column] = column === 'attributes' ? { ...((out as Json).attributes as Json | undefined), ...(value as Json) } : value;
    }
  }
  // Complete: every column is written by an entry (checked above, at compile time).
  return out as Fields;
}

/** What a table shows: each attribute with the type its `get` gives, absent when unassigned. */
type Shows<T> = { -readonly [K in keyof T]?: T[K] extends { get: (v: never) => infer V } ? Exclude<V, undefined> : never };

/** Shows a resource's attributes from the table, in its order, leaving out the unassigned. */
function show<View, T extends Readonly<Record<string, { get: (v: View, name: string) => unknown }>>>(table: T, view: View): Shows<T> {
  const out: Json = {};
  for (const [name, e] of Object.entries(table)) {
    const v = e.get(view, name);
    if (v !== undefined) out[name] = v;
  }
  // Built key by key from the same table whose `get` types the result.
  return out as Shows<T>;
}

export const readUserFields = (o: Json): DirectoryUserFields => readFields<UserView, DirectoryUserFields>(USER_ATTRIBUTES, o);
export const readGroupFields = (o: Json): DirectoryGroupFields => readFields<GroupView, DirectoryGroupFields>(GROUP_ATTRIBUTES, o);
export const showUser = (view: UserView): Omit<ScimUser, 'schemas' | 'id' | 'meta'> => show(USER_ATTRIBUTES, view);
export const showGroup = (view: GroupView): Omit<ScimGroup, 'schemas' | 'id' | 'meta'> => show(GROUP_ATTRIBUTES, view);

/** The schema text of each attribute of a table, for `/Schemas` and PATCH. */
export type SchemaTable = Readonly<Record<string, { readonly schema: SchemaText; readonly removable?: boolean }>>;

/** JSON with object keys sorted: a value read back from jsonb (keys reordered) equals the one written. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x));
}

/** The kept attributes that differ between two rows (a `member.updated` event's `changed`): by column, by name in `attributes`. */
export function changedColumns(before: DirectoryUserFields, after: DirectoryUserFields, skip: ReadonlyArray<keyof DirectoryUserFields> = []): string[] {
  const out: string[] = [];
  for (const [name, e] of Object.entries(USER_ATTRIBUTES)) {
    if (!('fields' in e)) continue;
    if (e.fields.length === 1 && e.fields[0] === 'attributes') {
      if (before.attributes[name] !== after.attributes[name]) out.push(name);
      continue;
    }
    const shown = e.fields.find((f) => !f.endsWith('_key') && !f.endsWith('_keys')) ?? e.fields[0]!;
    if (skip.includes(shown)) continue;
    if (e.fields.some((f) => canonical(before[f]) !== canonical(after[f]))) out.push(shown);
  }
  return out;
}
