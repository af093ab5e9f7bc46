/**
 * Who a sign-in in progress identified, kept until its interaction ends
 * (docs/sign-in.md#the-sign-in-page): the account an email code proved (the organization is
 * chosen next), or the account and tenant a connection's callback settled (handed back to the
 * interaction's own page, which carries the interaction's cookie). Bound to the interaction.
 */
import crypto from 'node:crypto';
import type { SignInHandback } from '../../context/records';
import { insertHandback, latestHandback, takeHandback } from '../../db/queries/sign-in-codes';
import type { Database } from '../../db/tenant-scope';

export interface Identified {
  readonly accountId: string;
  readonly method: 'email' | 'sso';
  readonly tenantId: string | null;
  readonly connectionId: string | null;
}

const identifiedOf = (r: SignInHandback): Identified => ({ accountId: r.account_id, method: r.method, tenantId: r.tenant_id, connectionId: r.connection_id });

/** Remembers `who` for the interaction; returns the handback's id. */
export async function rememberIdentified(db: Database, interactionUid: string, who: Identified): Promise<string> {
  const id = crypto.randomUUID();
  await insertHandback(db, { id, interactionUid, ...who });
  return id;
}

/** Takes the handback `id` of the interaction, once. */
export async function takeIdentified(db: Database, interactionUid: string, id: string): Promise<Identified | null> {
  if (!/^[0-9a-f-]{36}$/.test(id)) return null;
  const row = await takeHandback(db, id, interactionUid);
  return row ? identifiedOf(row) : null;
}

/** Whom an email code identified in this interaction (still choosing an organization); null when nobody. */
export async function emailIdentified(db: Database, interactionUid: string): Promise<Identified | null> {
  const row = await latestHandback(db, interactionUid, 'email');
  return row ? identifiedOf(row) : null;
}
