/**
 * The error catalog's mapping of database errors (src/db/database-errors.ts `mapDatabaseError` with the
 * constraint table of src/db/constraint-errors.ts): every class of data error a client's input
 * can reach is a 4xx, named constraints by their meaning, unknown errors null (a logged 500).
 */
import { CONSTRAINT_ERRORS } from '../../src/db/constraint-errors';
import { mapDatabaseError } from '../../src/db/database-errors';
import { ApiError } from '../../src/errors';

/** A pg DatabaseError-shaped object. */
const pg = (code: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(`pg ${code}`), { code, ...extra });
/** As Objection wraps it (UniqueViolationError, ForeignKeyViolationError, DBError…). */
const wrapped = (native: unknown) => Object.assign(new Error('wrapped'), { nativeError: native, name: 'DBError' });

const mapped = (err: unknown) => {
  const e = mapDatabaseError(err);
  return e && { status: e.status, error: e.error, detail: e.detail };
};

describe('by constraint name', () => {
  it.each([
    ['tenants_slug_unique', '23505', 409, 'Conflict'],
    ['users_tenant_identity_unique', '23505', 409, 'Conflict'],
    ['boards_tenant_id_created_by_fkey', '23503', 403, 'Access denied'],
    ['board_members_tenant_id_user_id_fkey', '23503', 403, 'Access denied'],
    ['users_tenant_id_fkey', '23503', 404, 'Tenant not found'],
    ['boards_tenant_id_fkey', '23503', 404, 'Tenant not found'],
    ['generations_tenant_id_board_id_fkey', '23503', 404, 'Not found'],
    ['tenants_slug_check', '23514', 400, 'Validation error'],
    ['users_role_check', '23514', 400, 'Validation error'],
  ])('%s (%s) → %i %s', (constraint, code, status, error) => {
    expect(mapped(pg(code, { constraint }))).toMatchObject({ status, error });
    expect(mapped(wrapped(pg(code, { constraint })))).toMatchObject({ status, error });
  });

  it('a taken slug names the slug', () => {
    const e = pg('23505', { constraint: 'tenants_slug_unique', detail: 'Key (slug)=(acme) already exists.' });
    expect(mapped(e)).toEqual({ status: 409, error: 'Conflict', detail: "A tenant with slug 'acme' already exists." });
  });

  it('every entry maps to a 4xx', () => {
    for (const [constraint, entry] of Object.entries(CONSTRAINT_ERRORS)) {
      const e = new ApiError(entry.kind, entry.detail({ code: '23000', constraint }));
      expect([constraint, e.status >= 400 && e.status < 500]).toEqual([constraint, true]);
    }
  });

  it('a constraint name like an Object.prototype key is not a catalog entry', () => {
    expect(mapped(pg('23505', { constraint: 'constructor' }))).toMatchObject({ status: 409, detail: 'The resource already exists.' });
    expect(mapped(pg('23514', { constraint: '__proto__' }))).toMatchObject({ status: 400 });
  });
});

describe('by SQLSTATE class when the constraint is unknown', () => {
  it.each([
    ['23505', 409], // unique
    ['23P01', 409], // exclusion
    ['23503', 409], // foreign key
    ['23001', 409], // restrict
    ['23502', 400], // not null
    ['23514', 400], // check
    ['23000', 400], // integrity
    ['22001', 400], // string too long
    ['22003', 400], // numeric out of range
    ['22007', 400], // invalid datetime format
    ['22008', 400], // datetime field overflow (2024-02-30)
    ['22P02', 400], // invalid text representation
    ['22P05', 400], // untranslatable character (U+0000)
    ['22021', 400], // character not in repertoire
    ['22023', 400], // invalid parameter value
    ['2200D', 400], // any other data exception
    ['54000', 400], // index row too big
  ])('%s → %i', (code, status) => {
    const e = mapDatabaseError(pg(code, { constraint: 'some_future_constraint' }));
    expect(e?.status).toBe(status);
    expect(mapDatabaseError(wrapped(pg(code)))?.status).toBe(status);
  });

  it('the detail never quotes the statement or the row', () => {
    const e = mapDatabaseError(pg('22001', { detail: 'secret row content', where: 'SQL statement "insert …"' }));
    expect(e?.detail).not.toMatch(/secret|insert/);
  });
});

describe('not data errors', () => {
  it.each([
    ['57014', 503], // statement timeout
    ['40001', 503], // serialization failure
    ['40P01', 503], // deadlock
    ['08006', 503], // connection failure
    ['ECONNREFUSED', 503],
  ])('%s → %i with Retry-After', (code, status) => {
    const e = mapDatabaseError(pg(code));
    expect(e?.status).toBe(status);
    expect(e?.headers['Retry-After']).toBeDefined();
  });

  it.each([
    'Query read timeout',
    'insert into "tenants" select * from jsonb_populate_recordset(null::"tenants", $1::jsonb) - Query read timeout',
    'timeout expired',
    'select 1 - timeout expired',
  ])("pg's client-side timeout, bare or after knex's statement (%s) → 503 with Retry-After", (message) => {
    const e = mapDatabaseError(new Error(message));
    expect(e?.status).toBe(503);
    expect(e?.headers['Retry-After']).toBeDefined();
  });

  it("a message that only mentions a timeout is not one (a logged 500)", () => {
    expect(mapDatabaseError(new Error('Query read timeout was configured'))).toBeNull();
  });

  it.each(['42501', '42P01', '42703', '54001', 'XX000', 'ERR_INVALID_ARG_TYPE'])('%s is unknown (a logged 500)', (code) => {
    expect(mapDatabaseError(pg(code))).toBeNull();
  });

  it('non-errors are unknown', () => {
    expect(mapDatabaseError(null)).toBeNull();
    expect(mapDatabaseError('23505')).toBeNull();
    expect(mapDatabaseError(new Error('boom'))).toBeNull();
  });
});
