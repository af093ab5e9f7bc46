/**
 * SCIM filters (RFC 7644 section 3.4.2.2), parsed by scim2-parse-filter and read into the terms of a
 * directory lookup (src/db/queries/directory-filter.ts makes its SQL), on the attributes whose
 * entry in ./attributes.ts names a filter column (docs/directory-sync.md#the-scim-api):
 * `eq ne co sw ew pr gt ge lt le` on strings and times, `eq ne pr` on booleans and ids, joined
 * by `and`, `or`, `not` and parentheses. Anything else is 400 `invalidFilter`: the filter is
 * never evaluated in memory over a tenant's 100 000 users.
 */
import { parse, type Filter } from 'scim2-parse-filter';
import type { CompareOp, DirectoryCondition, GroupColumn, UserColumn } from '../../db/queries/directory-filter';
import { COMMON_FILTERS, GROUP_ATTRIBUTES, USER_ATTRIBUTES, type FilterTarget, type SchemaText } from './attributes';
import { invalid } from './errors';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An RFC 3339 date-time (what meta.created / meta.lastModified show). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i;
const MAX_TERMS = 50;

type Targets<C extends string> = ReadonlyMap<string, FilterTarget<C>>;

/** The filterable paths of a table, lower-cased: `attr` and `attr.sub`, with the common ones. */
function targetsOf<C extends string>(table: Readonly<Record<string, { readonly schema: SchemaText; readonly filter?: Readonly<Record<string, FilterTarget<C>>> }>>, common: Readonly<Record<string, FilterTarget<C>>>): Targets<C> {
  const out = new Map<string, FilterTarget<C>>(Object.entries(common));
  for (const [name, e] of Object.entries(table)) {
    // A target kept under the attribute's name in an object column compares that key.
    for (const [sub, target] of Object.entries(e.filter ?? {})) out.set((sub ? `${name}.${sub}` : name).toLowerCase(), target.key === undefined ? target : { ...target, key: name });
  }
  return out;
}

const USER_TARGETS = targetsOf<UserColumn>(USER_ATTRIBUTES, COMMON_FILTERS);
const GROUP_TARGETS = targetsOf<GroupColumn>(GROUP_ATTRIBUTES, COMMON_FILTERS);

/** A target's key in an object column, spread into the condition (none for a column of its own). */
const keyOf = <C extends string>(t: FilterTarget<C>): { key?: string } => (t.key === undefined ? {} : { key: t.key });

/** The attribute path without a core schema URN prefix, lower-cased (SCIM attribute names are case-insensitive). */

function attributeName(path: string): string {
  return path.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '').toLowerCase();
}

/** The operators each kind of column takes (RFC 7644: ordering and substrings make no sense on a boolean). */
const OPERATORS: Record<FilterTarget<string>['kind'], ReadonlySet<CompareOp>> = {
  text: new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']),
  textArray: new Set(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le']),
  timestamp: new Set(['eq', 'ne', 'gt', 'ge', 'lt', 'le']),
  boolean: new Set(['eq', 'ne']),
  uuid: new Set(['eq', 'ne']),
};

function compare<C extends string>(path: string, target: FilterTarget<C>, op: CompareOp, value: unknown): DirectoryCondition<C> {
  if (!OPERATORS[target.kind].has(op)) throw invalid('invalidFilter', `'${path}' does not take '${op}'; it takes ${[...OPERATORS[target.kind]].join(', ')}, pr.`);
  switch (target.kind) {
    case 'boolean': {
      const b = typeof value === 'string' && /^(true|false)$/i.test(value) ? value.toLowerCase() === 'true' : value;
      if (typeof b !== 'boolean') throw invalid('invalidFilter', `'${path} ${op}' needs true or false.`);
      return { kind: 'compare', column: target.column, op, value: b, caseExact: true };
    }
    case 'uuid':
      if (typeof value !== 'string') throw invalid('invalidFilter', `'${path} ${op}' needs a string value.`);
      // An id that is not a UUID names nothing (and never reaches a uuid cast).
      if (!UUID.test(value)) return op === 'eq' ? { kind: 'none' } : { kind: 'all' };
      return { kind: 'compare', column: target.column, op, value, caseExact: true };
    case 'timestamp':
      if (typeof value !== 'string' || !DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) throw invalid('invalidFilter', `'${path} ${op}' needs a date-time such as "2026-01-31T12:00:00Z".`);
      return { kind: 'compare', column: target.column, op, value, caseExact: true };
    default:
      if (typeof value !== 'string') throw invalid('invalidFilter', `'${path} ${op}' needs a string value.`);
      return { kind: 'compare', column: target.column, ...keyOf(target), op, value: target.fold ? target.fold(value) : value, caseExact: target.caseExact || target.fold !== undefined };
  }
}

function translate<C extends string>(f: Filter, targets: Targets<C>, terms: { n: number }, prefix = ''): DirectoryCondition<C> {
  if (++terms.n > MAX_TERMS) throw invalid('invalidFilter', `A filter may have at most ${MAX_TERMS} terms.`);
  switch (f.op) {
    case 'and':
    case 'or':
      return { kind: f.op, parts: f.filters.map((x) => translate(x, targets, terms, prefix)) };
    case 'not':
      return { kind: 'not', part: translate(f.filter, targets, terms, prefix) };
    case '[]': {
      // emails[value co "x"]: the same as emails.value co "x" (one filterable sub-attribute per value).
      if (prefix) throw invalid('invalidFilter', 'A value filter cannot hold another.');
      return translate(f.valFilter, targets, terms, `${attributeName(f.attrPath)}.`);
    }
    default: {
      const path = prefix + attributeName(f.attrPath);
      const target = targets.get(path);
      if (!target) throw invalid('invalidFilter', `Filtering on '${f.attrPath.slice(0, 100)}' is not supported; filter on ${[...targets.keys()].join(', ')}.`);
      if (f.op === 'pr') return { kind: 'present', column: target.column, ...keyOf(target) };
      return compare(path, target, f.op, f.compValue);
    }
  }
}

function conditionOf<C extends string>(filter: string | undefined, targets: Targets<C>): DirectoryCondition<C> {
  if (filter === undefined || filter.trim() === '') return { kind: 'all' };
  let ast: Filter;
  try {
    ast = parse(filter);
  } catch (err) {
    throw invalid('invalidFilter', `The filter cannot be parsed: ${(err as Error).message.slice(0, 200)}`);
  }
  return translate(ast, targets, { n: 0 });
}

export const userFilter = (filter: string | undefined): DirectoryCondition<UserColumn> => conditionOf(filter, USER_TARGETS);
export const groupFilter = (filter: string | undefined): DirectoryCondition<GroupColumn> => conditionOf(filter, GROUP_TARGETS);
