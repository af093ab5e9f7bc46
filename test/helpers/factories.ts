/**
 * Factories: tenants, users and really signed tokens, with unique slugs and emails. Rows are
 * written as the database owner (the test's superuser connection), the way fixtures are.
 */
import crypto from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import { loadOrCreateLocalKeys, signLocalToken, type LocalTokenOptions } from '../../src/auth/local-keys';
import { LOCAL_ISSUER } from '../../src/auth/local-keys';
import { TEST_DATA_DIR, testDatabaseUrl } from './app';
import type { RoleKey } from '../../src/context/roles';

let ownerDb: Knex | null = null;

/** A connection as the database owner (superuser): bypasses row-level security, for fixtures. */
export function ownerConnection(): Knex {
  ownerDb ??= knexFactory({ client: 'pg', connection: testDatabaseUrl(), pool: { min: 0, max: 3 } });
  return ownerDb;
}

export async function closeOwnerConnection(): Promise<void> {
  await ownerDb?.destroy();
  ownerDb = null;
}

/** A short random suffix for unique slugs, subjects and emails. */
export function unique(prefix = 't'): string {
  return `${prefix}-${crypto.randomBytes(5).toString('hex')}`;
}

export interface TenantFixture {
  id: string;
  slug: string;
  name: string;
}

export async function createTenant(opts: { slug?: string; name?: string; status?: 'active' | 'pending_approval'; settings?: object } = {}): Promise<TenantFixture> {
  const slug = opts.slug ?? unique('acme');
  const name = opts.name ?? `Tenant ${slug}`;
  const [row] = await ownerConnection()('tenants')
    .insert({ slug, name, status: opts.status ?? 'active', settings: JSON.stringify(opts.settings ?? {}) })
    .returning(['id', 'slug', 'name']);
  return row as TenantFixture;
}

export interface UserFixture {
  id: string;
  tenantId: string;
  subject: string;
  issuer: string;
  email: string;
  role: RoleKey;
}

export async function createUser(
  tenantId: string,
  opts: { subject?: string; email?: string; role?: RoleKey; issuer?: string } = {},
): Promise<UserFixture> {
  const subject = opts.subject ?? unique('user');
  const email = opts.email ?? `${subject}@example.test`;
  const issuer = opts.issuer ?? LOCAL_ISSUER;
  const [row] = await ownerConnection()('users')
    .insert({ tenant_id: tenantId, subject, email, issuer, role: opts.role ?? 'member' })
    .returning(['id']);
  return { id: (row as { id: string }).id, tenantId, subject, issuer, email, role: opts.role ?? 'member' };
}

/** A token signed with the test data dir's local key (the `local` provider). */
export function tokenFor(opts: Partial<LocalTokenOptions> & { claims?: Record<string, unknown> } = {}): string {
  const keys = loadOrCreateLocalKeys(TEST_DATA_DIR);
  return signLocalToken(keys, { sub: opts.sub ?? unique('user'), ...opts, extraClaims: { ...(opts.extraClaims ?? {}), ...(opts.claims ?? {}) } });
}

/** A platform admin's token. */
export function adminToken(sub = unique('admin')): string {
  return tokenFor({ sub, admin: true });
}

/** A tenant, a member user of it, and the user's token (tenant named only by X-Tenant). */
export async function tenantWithMember(role: RoleKey = 'member'): Promise<{ tenant: TenantFixture; user: UserFixture; token: string }> {
  const tenant = await createTenant();
  const user = await createUser(tenant.id, { role });
  return { tenant, user, token: tokenFor({ sub: user.subject, email: user.email }) };
}
