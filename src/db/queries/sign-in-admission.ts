/**
 * SQL of sign-in's accounts and admission (docs/sign-in.md#who-a-connection-admits): writes to
 * `sign_in_accounts` and `sign_in_identities` (the provider's reads are in ./sign-in-accounts.ts),
 * and the cross-tenant reads the sign-in pages need (run under the reader role: which tenant
 * verified an email's domain, which tenants a person is a member of).
 */
import type { Knex } from 'knex';
import { platformReadStatements, serviceStatements } from '../tenant-scope';
import type { SignInAccountRecord, SignInIdentityRecord } from '../../context/records';
import type { TenantStatus } from '../../context/tenant-status';


/** The account an identity (issuer, subject) belongs to; undefined when none. */
export async function accountOfIdentity(db: Knex, issuer: string, subject: string): Promise<SignInAccountRecord | undefined> {
  const [result] = await serviceStatements(
    db,
    ['select a.id, a.email, a.email_verified, a.name from sign_in_identities i join sign_in_accounts a on a.id = i.account_id where i.issuer = $1 and i.subject = $2 limit 1'],
    [issuer, subject],
  );
  return result!.rows[0] as SignInAccountRecord | undefined;
}

/** Accounts holding this verified email, oldest first, each with its identities. */
export async function accountsWithVerifiedEmail(trx: Knex.Transaction, email: string): Promise<Array<SignInAccountRecord & { identities: SignInIdentityRecord[] }>> {
  const accounts = (await trx('sign_in_accounts').where({ email, email_verified: true }).orderBy('created_at').limit(20).select('id', 'email', 'email_verified', 'name')) as SignInAccountRecord[];
  if (accounts.length === 0) return [];
  const identities = (await trx('sign_in_identities')
    .whereIn(
      'account_id',
      accounts.map((a) => a.id),
    )
    .select('account_id', 'kind', 'issuer', 'subject', 'connection_id', 'tenant_id')) as SignInIdentityRecord[];
  return accounts.map((a) => ({ ...a, identities: identities.filter((i) => i.account_id === a.id) }));
}

export async function insertAccount(trx: Knex.Transaction, a: { id: string; email: string | null; emailVerified: boolean; name: string | null }): Promise<SignInAccountRecord> {
  const [row] = (await trx('sign_in_accounts').insert({ id: a.id, email: a.email, email_verified: a.emailVerified, name: a.name }).returning(['id', 'email', 'email_verified', 'name'])) as SignInAccountRecord[];
  return row!;
}

/** Adds an identity to an account; false when that (issuer, subject) already belongs to one (a concurrent first sign-in). */
export async function insertIdentity(trx: Knex.Transaction, i: SignInIdentityRecord): Promise<boolean> {
  const rows = (await trx('sign_in_identities').insert(i).onConflict(['issuer', 'subject']).ignore().returning('account_id')) as unknown[];
  return rows.length > 0;
}

/** Keeps the account's name and email as its identity provider last said (only when it vouches for the email). */
export async function refreshAccount(db: Knex, id: string, a: { email: string | null; emailVerified: boolean; name: string | null }): Promise<void> {
  const email = a.email !== null && a.emailVerified ? a.email : null;
  if (a.name === null && email === null) return;
  // One round trip, and no write at all when nothing changed.
  await serviceStatements(
    db,
    [
      `update sign_in_accounts set name = coalesce($2, name), email = coalesce($3, email), email_verified = email_verified or $3::text is not null
        where id = $1::uuid and (name is distinct from coalesce($2, name) or email is distinct from coalesce($3, email) or ($3::text is not null and not email_verified))`,
    ],
    [id, a.name, email],
  );
}

/**
 * Among `tenantIds`, those that verified one of `domains` (an email's domain and its parents):
 * read under the reader role.
 */
export async function tenantsVerifyingDomain(trx: Knex.Transaction, tenantIds: readonly string[], domains: readonly string[]): Promise<Set<string>> {
  if (tenantIds.length === 0 || domains.length === 0) return new Set();
  const rows = (await trx('tenant_domains')
    .where('status', 'verified')
    .whereIn('tenant_id', tenantIds as string[])
    .whereIn('domain', domains as string[])
    .distinct('tenant_id')) as Array<{ tenant_id: string }>;
  return new Set(rows.map((r) => r.tenant_id));
}

/** The tenant that verified the longest of `domains` (an email's domain and its parents); null when none did. */
export async function tenantOfVerifiedDomain(trx: Knex.Transaction, domains: readonly string[]): Promise<string | null> {
  if (domains.length === 0) return null;
  const row = (await trx('tenant_domains')
    .where('status', 'verified')
    .whereIn('domain', domains as string[])
    .orderByRaw('char_length(domain) desc')
    .first('tenant_id')) as { tenant_id: string } | undefined;
  return row?.tenant_id ?? null;
}

export interface TenantSummary {
  id: string;
  slug: string;
  name: string;
  status: TenantStatus;
}

/** A tenant by its id (when `ref` is a uuid) or slug. */
export async function tenantByRef(db: Knex, ref: string): Promise<TenantSummary | undefined> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref);
  const [result] = await platformReadStatements(db, [`select id, slug, name, status from tenants where ${isUuid ? 'id = $1::uuid' : 'slug = $1'} limit 1`], [isUuid ? ref.toLowerCase() : ref]);
  return result!.rows[0] as TenantSummary | undefined;
}

/** The tenants where (issuer, subject) is a member, by slug; `active_member` false when its directory deactivated the membership. */
export async function membershipsOf(trx: Knex.Transaction, issuer: string, subject: string): Promise<Array<TenantSummary & { active_member: boolean }>> {
  const { rows } = (await trx.raw(
    `select t.id, t.slug, t.name, t.status,
            coalesce((select du.active from directory_users du where du.tenant_id = u.tenant_id and du.user_id = u.id), true) as active_member
       from users u join tenants t on t.id = u.tenant_id
      where u.issuer = ? and u.subject = ?
      order by t.slug limit 200`,
    [issuer, subject],
  )) as { rows: Array<TenantSummary & { active_member: boolean }> };
  return rows;
}
