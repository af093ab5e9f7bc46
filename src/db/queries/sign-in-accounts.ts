/**
 * SQL of the people who sign in through the provider (tables `sign_in_accounts` and
 * `sign_in_identities`, migration 027), read side. Platform rows, read only outside a tenant
 * transaction.
 */
import type { Knex } from 'knex';
import { grantSignInOf, selectGrantSignInSql, type GrantSignIn } from './oidc-payloads';
import { serviceStatements } from '../tenant-scope';

export interface SignInAccount {
  /** The stable `sub` of every token the provider issues for this person. */
  readonly id: string;
  /** Lower-cased; null when no identity provider gave one. */
  readonly email: string | null;
  readonly emailVerified: boolean;
  readonly name: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface SignInIdentity {
  readonly id: string;
  readonly accountId: string;
  readonly kind: 'email' | 'oidc' | 'saml';
  readonly issuer: string;
  readonly subject: string;
  readonly connectionId: string | null;
  readonly tenantId: string | null;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
}

interface AccountRow {
  id: string;
  email: string | null;
  email_verified: boolean;
  name: string | null;
  created_at: Date;
  updated_at: Date;
}

interface IdentityRow {
  id: string;
  account_id: string;
  kind: SignInIdentity['kind'];
  issuer: string;
  subject: string;
  connection_id: string | null;
  tenant_id: string | null;
  created_at: Date;
  last_used_at: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function accountOfRow(r: AccountRow): SignInAccount {
  return { id: r.id, email: r.email, emailVerified: r.email_verified, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at };
}

function identityOfRow(r: IdentityRow): SignInIdentity {
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    issuer: r.issuer,
    subject: r.subject,
    connectionId: r.connection_id,
    tenantId: r.tenant_id,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
  };
}

const SELECT_ACCOUNT = 'select id, email, email_verified, name, created_at, updated_at from sign_in_accounts where id = $1';

/** The account `id` in one round trip outside any transaction; null when there is none (or `id` is not a uuid). */
export async function selectSignInAccountNow(db: Knex, id: string): Promise<SignInAccount | null> {
  if (!UUID.test(id)) return null;
  const [result] = await serviceStatements(db, [SELECT_ACCOUNT], [id]);
  const row = result!.rows[0] as AccountRow | undefined;
  return row ? accountOfRow(row) : null;
}

/** The account `id` and the sign-in recorded on grant `grantId`, in one round trip (a token's claims). */
export async function selectSignInAccountAndGrant(db: Knex, id: string, grantId: string): Promise<{ account: SignInAccount | null; signIn: GrantSignIn | null }> {
  if (!UUID.test(id)) return { account: null, signIn: null };
  const [account, grant] = await serviceStatements(db, [SELECT_ACCOUNT, selectGrantSignInSql(2)], [id, grantId]);
  const row = account!.rows[0] as AccountRow | undefined;
  return { account: row ? accountOfRow(row) : null, signIn: grantSignInOf(grant!.rows[0]) };
}

/** The accounts holding this (lower-cased) email, oldest first. */
export async function selectSignInAccountsByEmail(trx: Knex.Transaction, email: string): Promise<SignInAccount[]> {
  const rows = (await trx('sign_in_accounts').where({ email: email.toLowerCase() }).orderBy([{ column: 'created_at' }, { column: 'id' }])) as AccountRow[];
  return rows.map(accountOfRow);
}

/** The identity (issuer, subject) and its account; null when unknown. */
export async function selectSignInIdentity(trx: Knex.Transaction, issuer: string, subject: string): Promise<{ identity: SignInIdentity; account: SignInAccount } | null> {
  const row = (await trx('sign_in_identities').where({ issuer, subject }).first()) as IdentityRow | undefined;
  if (!row) return null;
  const account = (await trx('sign_in_accounts').where({ id: row.account_id }).first()) as AccountRow;
  return { identity: identityOfRow(row), account: accountOfRow(account) };
}

/** Every identity of an account, oldest first. */
export async function selectSignInIdentities(trx: Knex.Transaction, accountId: string): Promise<SignInIdentity[]> {
  if (!UUID.test(accountId)) return [];
  const rows = (await trx('sign_in_identities').where({ account_id: accountId }).orderBy([{ column: 'created_at' }, { column: 'id' }])) as IdentityRow[];
  return rows.map(identityOfRow);
}
