/**
 * The SQL of a directory lookup (docs/directory-sync.md#the-scim-api): the condition the SCIM
 * filter was read into (src/domain/scim/filter.ts), on the columns of `directory_users` (alias
 * `du`) or `directory_groups` (alias `dg`). Every value is a binding; a column is named only
 * from the tables below, never from the request. A text kept in a user's `attributes` object is
 * compared by its key there (`key`: the attribute's name, from the attribute table, bound as a
 * value too).
 */

/** How a column is compared: text, an array of text keys, a boolean, a timestamp, a uuid. */
export type ColumnKind = 'text' | 'textArray' | 'boolean' | 'timestamp' | 'uuid';

const USER_COLUMNS = {
  user_name_key: { sql: 'du.user_name_key', kind: 'text', nullable: false },
  external_id: { sql: 'du.external_id', kind: 'text', nullable: true },
  display_name: { sql: 'du.display_name', kind: 'text', nullable: true },
  email_keys: { sql: 'du.email_keys', kind: 'textArray', nullable: false },
  attributes: { sql: 'du.attributes', kind: 'text', nullable: true, keyed: true },
  active: { sql: 'du.active', kind: 'boolean', nullable: false },
  created_at: { sql: 'du.created_at', kind: 'timestamp', nullable: false },
  updated_at: { sql: 'du.updated_at', kind: 'timestamp', nullable: false },
  id: { sql: 'du.id', kind: 'uuid', nullable: false },
} as const satisfies Record<string, ColumnSpec>;

const GROUP_COLUMNS = {
  display_name: { sql: 'dg.display_name', kind: 'text', nullable: false },
  external_id: { sql: 'dg.external_id', kind: 'text', nullable: true },
  created_at: { sql: 'dg.created_at', kind: 'timestamp', nullable: false },
  updated_at: { sql: 'dg.updated_at', kind: 'timestamp', nullable: false },
  id: { sql: 'dg.id', kind: 'uuid', nullable: false },
} as const satisfies Record<string, ColumnSpec>;

interface ColumnSpec {
  readonly sql: string;
  readonly kind: ColumnKind;
  readonly nullable: boolean;
  /** A JSON object of texts: compared by a condition's `key` (without one, nothing matches). */
  readonly keyed?: boolean;
}

type Columns = Record<string, ColumnSpec>;
/** The columns of `T` whose kind is `K`. */
type OfKind<T extends Columns, K extends ColumnKind> = { [C in keyof T]: T[C]['kind'] extends K ? C : never }[keyof T] & string;

/** A column of directory_users a filter may compare, by the kind it is compared as. */
export type UserColumn<K extends ColumnKind = ColumnKind> = OfKind<typeof USER_COLUMNS, K>;
/** A column of directory_groups a filter may compare, by the kind it is compared as. */
export type GroupColumn<K extends ColumnKind = ColumnKind> = OfKind<typeof GROUP_COLUMNS, K>;

/** RFC 7644's comparison operators (`pr` is `present`). */
export type CompareOp = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le';

/** A filter read into terms: nothing but these reaches SQL. */
export type DirectoryCondition<C extends string = string> =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  /**
   * `value` as stored: the user name's and emails' keys already folded, a timestamp an ISO
   * string, an id a UUID. `caseExact: false` compares text lower-cased.
   */
  | { readonly kind: 'compare'; readonly column: C; readonly key?: string; readonly op: CompareOp; readonly value: string | boolean; readonly caseExact: boolean }
  | { readonly kind: 'present'; readonly column: C; readonly key?: string }
  | { readonly kind: 'and' | 'or'; readonly parts: readonly DirectoryCondition<C>[] }
  | { readonly kind: 'not'; readonly part: DirectoryCondition<C> };

export interface SqlCondition {
  readonly sql: string;
  readonly bindings: readonly unknown[];
}

const ORDER: Partial<Record<CompareOp, string>> = { gt: '>', ge: '>=', lt: '<', le: '<=' };

/** One text comparison of `x` (an SQL expression) with the binding `?`. */
function textSql(x: string, op: CompareOp): string {
  switch (op) {
    case 'eq':
      return `${x} = ?`;
    case 'ne':
      return `${x} is distinct from ?`;
    case 'co':
      return `strpos(${x}, ?) > 0`;
    case 'sw':
      return `starts_with(${x}, ?)`;
    case 'ew':
      return `right(${x}, char_length(?::text)) = ?`;
    default:
      return `${x} ${ORDER[op]} ?`;
  }
}

function compareSql(spec: ColumnSpec, op: CompareOp, value: string | boolean, caseExact: boolean): SqlCondition {
  const bind = (sql: string, v: unknown): SqlCondition => ({ sql, bindings: op === 'ew' ? [v, v] : [v] });
  switch (spec.kind) {
    case 'text': {
      const folded = !caseExact;
      const x = folded ? `lower(${spec.sql})` : spec.sql;
      return bind(textSql(x, op), folded ? String(value).toLowerCase() : value);
    }
    case 'textArray': {
      // An array of keys: eq / ne are index-friendly containment; the others look at each key.
      if (op === 'eq') return { sql: `${spec.sql} @> array[?]::text[]`, bindings: [value] };
      if (op === 'ne') return { sql: `not (${spec.sql} @> array[?]::text[])`, bindings: [value] };
      return bind(`exists (select 1 from unnest(${spec.sql}) as k(v) where ${textSql('k.v', op)})`, value);
    }
    case 'boolean':
      return { sql: op === 'ne' ? `${spec.sql} <> ?` : `${spec.sql} = ?`, bindings: [value] };
    case 'timestamp': {
      // meta times are shown to the millisecond; compare what was shown.
      const x = `date_trunc('milliseconds', ${spec.sql})`;
      return { sql: op === 'ne' ? `${x} <> ?::timestamptz` : op === 'eq' ? `${x} = ?::timestamptz` : `${x} ${ORDER[op]} ?::timestamptz`, bindings: [value] };
    }
    case 'uuid':
      return { sql: op === 'ne' ? `${spec.sql} <> ?::uuid` : `${spec.sql} = ?::uuid`, bindings: [value] };
  }
}

/** The column as compared: a keyed column's text under `key` (its binding comes first); null when the two do not fit. */
function keyedSpec(spec: ColumnSpec | undefined, key: string | undefined): ColumnSpec | null {
  if (!spec || (spec.keyed === true) !== (key !== undefined)) return null;
  return key === undefined ? spec : { ...spec, sql: `(${spec.sql} ->> ?)` };
}

const withKey = (c: SqlCondition, key: string | undefined): SqlCondition => (key === undefined ? c : { sql: c.sql, bindings: [key, ...c.bindings] });

function toSql(c: DirectoryCondition, columns: Columns): SqlCondition {
  switch (c.kind) {
    case 'all':
      return { sql: 'true', bindings: [] };
    case 'none':
      return { sql: 'false', bindings: [] };
    case 'compare': {
      const spec = keyedSpec(columns[c.column], c.key);
      // The domain offers only the columns of the resource it filters; any other matches nothing.
      return spec ? withKey(compareSql(spec, c.op, c.value, c.caseExact), c.key) : { sql: 'false', bindings: [] };
    }
    case 'present': {
      const spec = keyedSpec(columns[c.column], c.key);
      if (!spec) return { sql: 'false', bindings: [] };
      if (c.key !== undefined) return { sql: `coalesce(${spec.sql}, '') <> ''`, bindings: [c.key] };
      if (spec.kind === 'textArray') return { sql: `cardinality(${spec.sql}) > 0`, bindings: [] };
      if (spec.kind === 'text') return { sql: `coalesce(${spec.sql}, '') <> ''`, bindings: [] };
      return { sql: `${spec.sql} is not null`, bindings: [] };
    }
    case 'and':
    case 'or': {
      const parts = c.parts.map((p) => toSql(p, columns));
      return { sql: parts.map((p) => `(${p.sql})`).join(` ${c.kind} `), bindings: parts.flatMap((p) => p.bindings) };
    }
    case 'not': {
      // An unassigned attribute compares as unknown (null): under `not` it counts as false, as RFC 7644 reads it.
      const inner = toSql(c.part, columns);
      return { sql: `not coalesce((${inner.sql}), false)`, bindings: inner.bindings };
    }
  }
}

export const userConditionSql = (c: DirectoryCondition<UserColumn>): SqlCondition => toSql(c, USER_COLUMNS);
export const groupConditionSql = (c: DirectoryCondition<GroupColumn>): SqlCondition => toSql(c, GROUP_COLUMNS);
