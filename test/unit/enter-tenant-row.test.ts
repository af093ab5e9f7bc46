/**
 * src/db/queries/enter-tenant.ts fails closed: a tenant row produced by a statement that did
 * not run as the runtime role (a changed pool setup, a pooler) is refused, never served.
 */
import { checkedRow, type TenantFactsRow } from '../../src/db/queries/enter-tenant';
import { APP_ROLE } from '../../src/db/schema';

const row = (db_user: string) => ({ db_user, tenant_id: 't', tenant_slug: 'acme' }) as unknown as TenantFactsRow;

it('passes the row that ran as the runtime role', () => {
  const r = row(APP_ROLE);
  expect(checkedRow([r])).toBe(r);
});

it('refuses a row that ran as any other role (e.g. the owner, which bypasses row-level security)', () => {
  expect(() => checkedRow([row('postgres')])).toThrow(/refusing to serve tenant data without row-level security/);
  expect(() => checkedRow([row('tenant_service_reader')])).toThrow(/not the runtime role/);
});

it('no row: no tenant matched', () => {
  expect(checkedRow([])).toBeNull();
});
