/**
 * Sign-in accounts (docs/sign-in.md#who-a-connection-admits): one per person, its id the `sub`
 * the provider issues. An account is found by an identity: the connection's (its issuer or SAML
 * entity id, and the subject or NameID) or the email code's (`email`, the lower-cased address).
 *
 * A new identity joins an existing account only when both vouch for the same email at a domain
 * the tenants involved verified: the new one is a connection whose tenant verified the email's
 * domain (or the email code itself), and the account holds that email by the email code or by a
 * connection whose tenant verified its domain. An unverified email never links anything: the
 * person gets a new account.
 */
import crypto from 'node:crypto';
import type { UpstreamIdentity } from '../../context/sign-in';
import type { SignInAccountRecord, SignInIdentityRecord } from '../../context/records';
import {
  accountOfIdentity,
  accountsWithVerifiedEmail,
  insertAccount,
  insertIdentity,
  refreshAccount,
  tenantsVerifyingDomain,
} from '../../db/queries/sign-in-admission';
import { withPlatformRead, withService, type Database } from '../../db/tenant-scope';
import { emailDomains } from '../domains/names';

export interface SignInAccount {
  readonly id: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
  readonly name: string | null;
}

/** The email identity's issuer: not a URL, so no identity provider can ever claim it. */
export const EMAIL_ISSUER = 'email';

const accountOf = (r: SignInAccountRecord): SignInAccount => ({ id: r.id, email: r.email, emailVerified: r.email_verified, name: r.name });

/** How an account came to hold its email: by the email code, or by a connection whose tenant verified the domain. */
function vouchedBy(identity: SignInIdentityRecord, email: string, verifying: ReadonlySet<string>): boolean {
  if (identity.kind === 'email') return identity.issuer === EMAIL_ISSUER && identity.subject === email;
  return identity.tenant_id !== null && verifying.has(identity.tenant_id);
}

/**
 * The account a new identity may join: the oldest account holding `email` as vouched for (see
 * the module's comment). `viaTenant`: the tenant of the new identity's connection, which must
 * have verified the email's domain; null for the email code, which vouches by itself.
 */
async function linkableAccount(db: Database, email: string, viaTenant: string | null): Promise<SignInAccount | null> {
  const domains = emailDomains(email);
  if (!domains) return null;
  const candidates = await withService(db, (trx) => accountsWithVerifiedEmail(trx, email));
  if (candidates.length === 0) return null;
  const tenantIds = new Set<string>(viaTenant === null ? [] : [viaTenant]);
  for (const c of candidates) for (const i of c.identities) if (i.tenant_id) tenantIds.add(i.tenant_id);
  const verifying = await withPlatformRead(db, (trx) => tenantsVerifyingDomain(trx, [...tenantIds], domains));
  if (viaTenant !== null && !verifying.has(viaTenant)) return null;
  const found = candidates.find((c) => c.identities.some((i) => vouchedBy(i, email, verifying)));
  return found ? accountOf(found) : null;
}

/** Adds the identity to `accountId`, or finds the account a concurrent first sign-in gave it. */
async function attach(db: Database, identity: SignInIdentityRecord, account: SignInAccount | null, fresh: { email: string | null; emailVerified: boolean; name: string | null }): Promise<{ account: SignInAccount; linked: boolean; created: boolean }> {
  return withService(db, async (trx) => {
    const target = account ?? accountOf(await insertAccount(trx, { id: crypto.randomUUID(), ...fresh }));
    if (await insertIdentity(trx, { ...identity, account_id: target.id })) return { account: target, linked: account !== null, created: account === null };
    // Someone else's first sign-in with this identity committed first: theirs is the account.
    throw new ConcurrentFirstSignIn();
  });
}

class ConcurrentFirstSignIn extends Error {}

async function findOrAttach(db: Database, issuer: string, subject: string, make: () => Promise<{ account: SignInAccount; linked: boolean; created: boolean }>) {
  for (let i = 0; i < 2; i += 1) {
    const existing = await accountOfIdentity(db, issuer, subject);
    if (existing) return { account: accountOf(existing), linked: false, created: false };
    try {
      return await make();
    } catch (err) {
      if (!(err instanceof ConcurrentFirstSignIn)) throw err;
    }
  }
  throw new Error('sign-in identity neither found nor created');
}

export interface AccountResolution {
  readonly account: SignInAccount;
  /** The identity was new and joined an existing account. */
  readonly linked: boolean;
  /** A new account was made. */
  readonly created: boolean;
}

/** The account of a person who came through a tenant's connection (found, linked, or new). */
export async function accountForUpstream(db: Database, u: UpstreamIdentity): Promise<AccountResolution> {
  const email = u.email?.toLowerCase() ?? null;
  const resolved = await findOrAttach(db, u.issuer, u.subject, async () => {
    // Only an email the identity provider verified, at a domain its tenant verified, can link.
    const target = email !== null && u.emailVerified ? await linkableAccount(db, email, u.tenantId) : null;
    return attach(db, { account_id: '', kind: u.protocol, issuer: u.issuer, subject: u.subject, connection_id: u.connectionId, tenant_id: u.tenantId }, target, {
      email,
      emailVerified: email !== null && u.emailVerified,
      name: u.name,
    });
  });
  if (!resolved.created) {
    await refreshAccount(db, resolved.account.id, { email, emailVerified: u.emailVerified, name: u.name });
  }
  return resolved;
}

/** The account of a person who proved `email` by a code (found, linked, or new). */
export async function accountForEmail(db: Database, email: string): Promise<AccountResolution> {
  return findOrAttach(db, EMAIL_ISSUER, email, async () => {
    // The code vouches for the address; the account must hold it by a verified-domain connection.
    const target = await linkableAccount(db, email, null);
    return attach(db, { account_id: '', kind: 'email', issuer: EMAIL_ISSUER, subject: email, connection_id: null, tenant_id: null }, target, { email, emailVerified: true, name: null });
  });
}
