/**
 * SCIM filters (RFC 7644), parsed by scim2-parse-filter and read into the terms of a directory
 * lookup (src/db/queries/directory-filter.ts makes its SQL) on the attributes a directory looks
 * users and groups up by (docs/directory-sync.md#the-scim-api):
 * `eq` on those attributes, joined by `and` / `or`. Anything else is 400 `invalidFilter`: the
 * filter is never evaluated in memory over a tenant's 100 000 users.
 */
import { parse, type Filter } from 'scim2-parse-filter';
import type { DirectoryCondition } from '../../db/queries/directory-filter';
import { invalid } from './errors';
import { emailKey } from './resources';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const MAX_TERMS = 50;

type Column = (value: string) => DirectoryCondition;

const eq = (attribute: 'userName' | 'externalId' | 'email' | 'displayName', value: string): DirectoryCondition => ({ kind: 'eq', attribute, value });
/** An id that is not a UUID names nothing (and never reaches a uuid cast). */
const id = (v: string): DirectoryCondition => (UUID.test(v) ? { kind: 'eq', attribute: 'id', value: v } : { kind: 'none' });

const USER_ATTRIBUTES: Record<string, Column> = {
  username: (v) => eq('userName', emailKey(v)),
  externalid: (v) => eq('externalId', v),
  'emails.value': (v) => eq('email', emailKey(v)),
  emails: (v) => eq('email', emailKey(v)),
  displayname: (v) => eq('displayName', v),
  id,
};

const GROUP_ATTRIBUTES: Record<string, Column> = {
  displayname: (v) => eq('displayName', v),
  externalid: (v) => eq('externalId', v),
  id,
};

/** The attribute path without a core schema URN prefix, lower-cased (SCIM attribute names are case-insensitive). */
function attributeName(path: string): string {
  const p = path.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, '');
  return p.toLowerCase();
}

function translate(f: Filter, attributes: Record<string, Column>, terms: { n: number }): DirectoryCondition {
  if (++terms.n > MAX_TERMS) throw invalid('invalidFilter', `A filter may have at most ${MAX_TERMS} terms.`);
  switch (f.op) {
    case 'and':
    case 'or': {
      return { kind: f.op, parts: f.filters.map((x) => translate(x, attributes, terms)) };
    }
    case 'eq': {
      const column = attributes[attributeName(f.attrPath)];
      if (!column) throw invalid('invalidFilter', `Filtering on '${f.attrPath}' is not supported; use ${Object.keys(attributes).join(', ')} with eq.`);
      if (typeof f.compValue !== 'string') throw invalid('invalidFilter', `'${f.attrPath} eq' needs a string value.`);
      return column(f.compValue);
    }
    case '[]': {
      // emails[value eq "x"]: the same as emails.value eq "x".
      const inner = f.valFilter;
      if (inner.op === 'eq' && attributeName(f.attrPath) === 'emails' && attributeName(inner.attrPath) === 'value') {
        return translate({ op: 'eq', attrPath: 'emails.value', compValue: inner.compValue }, attributes, terms);
      }
      throw invalid('invalidFilter', `The filter '${f.attrPath}[…]' is not supported.`);
    }
    default:
      throw invalid('invalidFilter', `The operator '${f.op}' is not supported; use eq, and, or.`);
  }
}

function conditionOf(filter: string | undefined, attributes: Record<string, Column>): DirectoryCondition {
  if (filter === undefined || filter.trim() === '') return { kind: 'all' };
  let ast: Filter;
  try {
    ast = parse(filter);
  } catch (err) {
    throw invalid('invalidFilter', `The filter cannot be parsed: ${(err as Error).message.slice(0, 200)}`);
  }
  return translate(ast, attributes, { n: 0 });
}

export const userFilter = (filter: string | undefined): DirectoryCondition => conditionOf(filter, USER_ATTRIBUTES);
export const groupFilter = (filter: string | undefined): DirectoryCondition => conditionOf(filter, GROUP_ATTRIBUTES);
