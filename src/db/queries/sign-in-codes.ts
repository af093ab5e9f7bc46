/**
 * SQL of email sign-in codes (table `sign_in_email_codes`, migration 031). Platform rows, read
 * and written only outside a tenant transaction. Times are the database's clock, so instances
 * with skewed clocks agree on when a code expires and what the rate limits count.
 */
import type { Knex } from 'knex';
import { serviceStatements } from '../tenant-scope';
import type { EmailCode, SignInHandback } from '../../context/records';


/** How long rows are kept: longer than any rate-limit window, so using a code never resets a limit. */
const KEEP_SECONDS = 3600;

/**
 * Serializes the issuing of codes to one email (a transaction-scoped advisory lock), so two
 * requests at once cannot both pass its limit.
 */
export async function lockEmailForCodes(trx: Knex.Transaction, email: string): Promise<void> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('sign_in_email_codes:' || ?, 0))`, [email]);
}

/** Codes made for this email, and from this address, in the last `windowSeconds`. */
export async function countRecentCodes(trx: Knex.Transaction, q: { email: string; ip: string | null; windowSeconds: number }): Promise<{ byEmail: number; byAddress: number }> {
  const { rows } = (await trx.raw(
    `select count(*) filter (where email = ?)::int as by_email,
            count(*) filter (where ?::text is not null and ip = ?::text)::int as by_address
       from sign_in_email_codes
      where created_at > now() - make_interval(secs => ?) and (email = ? or (?::text is not null and ip = ?::text))`,
    [q.email, q.ip, q.ip, q.windowSeconds, q.email, q.ip, q.ip],
  )) as { rows: Array<{ by_email: number; by_address: number }> };
  return { byEmail: rows[0]?.by_email ?? 0, byAddress: rows[0]?.by_address ?? 0 };
}

/**
 * Inserts a code; first deletes rows older than an hour, and kills the live codes of the same
 * sign-in (a new code replaces the one mailed before).
 */
export async function insertEmailCode(
  trx: Knex.Transaction,
  c: { id: string; email: string; interactionUid: string; codeHash: Buffer; ip: string | null; ttlSeconds: number },
): Promise<EmailCode> {
  await trx('sign_in_email_codes').where('created_at', '<', trx.raw('now() - make_interval(secs => ?)', [KEEP_SECONDS])).delete();
  await trx('sign_in_email_codes').where({ interaction_uid: c.interactionUid }).whereNull('dead_at').update({ dead_at: trx.raw('now()') });
  const [row] = (await trx('sign_in_email_codes')
    .insert({
      id: c.id,
      email: c.email,
      interaction_uid: c.interactionUid,
      code_hash: c.codeHash,
      ip: c.ip,
      expires_at: trx.raw('now() + make_interval(secs => ?)', [c.ttlSeconds]),
    })
    .returning('*')) as EmailCode[];
  return row!;
}

/**
 * The newest code of this sign-in that is not dead, locked (a concurrent check of the same
 * sign-in waits), with the database's now. Undefined when there is none.
 */
export async function lockLiveCode(trx: Knex.Transaction, interactionUid: string): Promise<{ row: EmailCode | undefined; now: Date }> {
  const row = (await trx('sign_in_email_codes').where({ interaction_uid: interactionUid }).whereNull('dead_at').orderBy('created_at', 'desc').first().forUpdate()) as
    | EmailCode
    | undefined;
  const { rows } = (await trx.raw('select now() as now')) as { rows: Array<{ now: Date }> };
  return { row, now: rows[0]!.now };
}

/** Counts a wrong try; the code dies at `maxAttempts`. Returns the tries made. */
export async function countWrongAttempt(trx: Knex.Transaction, id: string, maxAttempts: number): Promise<number> {
  const [row] = (await trx('sign_in_email_codes')
    .where({ id })
    .update({ attempts: trx.raw('attempts + 1'), dead_at: trx.raw('case when attempts + 1 >= ? then now() else dead_at end', [maxAttempts]) })
    .returning('attempts')) as Array<{ attempts: number }>;
  return row?.attempts ?? maxAttempts;
}

/** Ends a code (used, or expired when found). */
export async function killEmailCode(trx: Knex.Transaction, id: string): Promise<void> {
  await trx('sign_in_email_codes').where({ id }).update({ dead_at: trx.raw('now()') });
}

/** Keeps who a sign-in in progress identified (10 minutes); expired rows are deleted in the same round trip. */
export async function insertHandback(db: Knex, h: { id: string; interactionUid: string; accountId: string; method: 'email' | 'sso'; tenantId: string | null; connectionId: string | null }): Promise<void> {
  await serviceStatements(
    db,
    [
      'delete from sign_in_handbacks where expires_at <= now()',
      `insert into sign_in_handbacks (id, interaction_uid, account_id, method, tenant_id, connection_id, expires_at)
       values ($1::uuid, $2, $3::uuid, $4, $5::uuid, $6::uuid, now() + interval '10 minutes')`,
    ],
    [h.id, h.interactionUid, h.accountId, h.method, h.tenantId, h.connectionId],
  );
}

const HANDBACK_COLUMNS = 'id, account_id, method, tenant_id, connection_id';

/** Takes (deletes) the live handback `id` of this interaction, in one round trip; undefined when none. */
export async function takeHandback(db: Knex, id: string, interactionUid: string): Promise<SignInHandback | undefined> {
  const [result] = await serviceStatements(
    db,
    [`delete from sign_in_handbacks where id = $1::uuid and interaction_uid = $2 and expires_at > now() returning ${HANDBACK_COLUMNS}`],
    [id, interactionUid],
  );
  return result!.rows[0] as SignInHandback | undefined;
}

/** The newest live handback of this interaction by `method` (not taken), in one round trip; undefined when none. */
export async function latestHandback(db: Knex, interactionUid: string, method: 'email' | 'sso'): Promise<SignInHandback | undefined> {
  const [result] = await serviceStatements(
    db,
    [`select ${HANDBACK_COLUMNS} from sign_in_handbacks where interaction_uid = $1 and method = $2 and expires_at > now() order by created_at desc limit 1`],
    [interactionUid, method],
  );
  return result!.rows[0] as SignInHandback | undefined;
}
