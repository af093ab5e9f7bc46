/**
 * The SQL of a directory lookup (docs/directory-sync.md#the-scim-api): the condition the SCIM
 * filter was read into (src/domain/scim/filter.ts), on the columns of `directory_users` (alias
 * `du`) or `directory_groups` (alias `dg`). Every value is a binding.
 */

/** An attribute a directory looks users or groups up by, compared with `eq`. */
export type DirectoryAttribute = 'userName' | 'externalId' | 'email' | 'displayName' | 'id';

/** A filter read into terms: nothing but these reaches SQL. */
export type DirectoryCondition =
  | { readonly kind: 'all' }
  | { readonly kind: 'none' }
  /** `value` as stored: the user name's and emails' keys already folded, an id a UUID. */
  | { readonly kind: 'eq'; readonly attribute: DirectoryAttribute; readonly value: string }
  | { readonly kind: 'and' | 'or'; readonly parts: readonly DirectoryCondition[] };

export interface SqlCondition {
  readonly sql: string;
  readonly bindings: readonly unknown[];
}

const USER_COLUMNS: Record<DirectoryAttribute, string | null> = {
  userName: 'du.user_name_key = ?',
  externalId: 'du.external_id = ?',
  email: 'du.email_keys @> array[?]::text[]',
  displayName: 'du.display_name = ?',
  id: 'du.id = ?::uuid',
};

const GROUP_COLUMNS: Record<DirectoryAttribute, string | null> = {
  userName: null,
  externalId: 'dg.external_id = ?',
  email: null,
  displayName: 'dg.display_name = ?',
  id: 'dg.id = ?::uuid',
};

function toSql(c: DirectoryCondition, columns: Record<DirectoryAttribute, string | null>): SqlCondition {
  switch (c.kind) {
    case 'all':
      return { sql: 'true', bindings: [] };
    case 'none':
      return { sql: 'false', bindings: [] };
    case 'eq': {
      const column = columns[c.attribute];
      // The domain offers only the attributes of the resource it filters; any other matches nothing.
      return column === null ? { sql: 'false', bindings: [] } : { sql: column, bindings: [c.value] };
    }
    case 'and':
    case 'or': {
      const parts = c.parts.map((p) => toSql(p, columns));
      return { sql: parts.map((p) => `(${p.sql})`).join(` ${c.kind} `), bindings: parts.flatMap((p) => p.bindings) };
    }
  }
}

export const userConditionSql = (c: DirectoryCondition): SqlCondition => toSql(c, USER_COLUMNS);
export const groupConditionSql = (c: DirectoryCondition): SqlCondition => toSql(c, GROUP_COLUMNS);
