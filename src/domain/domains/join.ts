/**
 * Tenants a caller may join by their verified email's domain (docs/domains.md#joining-by-domain):
 * read across tenants under the reader role.
 */
import { selectJoinable, type JoinableTenant } from '../../db/queries/domains';
import { withPlatformRead, type Database } from '../../db/tenant-scope';
import { emailDomains } from './names';

export type { JoinableTenant } from '../../db/queries/domains';

/** The tenants `GET /api/tenants/joinable` lists for this caller: none without a verified email. */
export async function listJoinable(db: Database, caller: { issuer: string; subject: string; email: string | null; emailVerified?: boolean | null }): Promise<JoinableTenant[]> {
  const domains = caller.emailVerified === true && caller.email ? emailDomains(caller.email) : null;
  if (!domains || domains.length === 0) return [];
  return withPlatformRead(db, (trx) => selectJoinable(trx, domains, caller.issuer, caller.subject));
}
