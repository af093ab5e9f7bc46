/**
 * SQL of the console sign-in codes (table `console_sign_in_codes`, migration 012). Platform rows,
 * read and written only outside a tenant transaction. Times are the database's clock, so
 * instances with skewed clocks agree on when a code expires.
 */
import type { Knex } from 'knex';
import type { ConsoleSignInCode } from '../../context/records';

export interface NewConsoleSignInCode {
  id: string;
  codeHash: Buffer;
  sealedToken: Record<string, unknown>;
  issuer: string;
  subject: string;
  platformAdmin: boolean;
  /** Lifetime from the database's now. */
  ttlSeconds: number;
}

/**
 * Inserts a code, and first deletes the codes that have expired: the table holds only codes
 * that can still be used.
 */
export async function insertConsoleSignInCode(trx: Knex.Transaction, code: NewConsoleSignInCode): Promise<ConsoleSignInCode> {
  await trx('console_sign_in_codes').where('expires_at', '<=', trx.raw('now()')).delete();
  const [row] = (await trx('console_sign_in_codes')
    .insert({
      id: code.id,
      code_hash: code.codeHash,
      sealed_token: code.sealedToken,
      issuer: code.issuer,
      subject: code.subject,
      platform_admin: code.platformAdmin,
      expires_at: trx.raw('now() + make_interval(secs => ?)', [code.ttlSeconds]),
    })
    .returning('*')) as ConsoleSignInCode[];
  return row!;
}

/**
 * Removes the code with this hash and returns it, with the database's now: whatever the caller
 * then decides, the code is spent. Two takes of one code at once: the second waits for the
 * first's row lock, then finds nothing.
 */
export async function takeConsoleSignInCode(trx: Knex.Transaction, codeHash: Buffer): Promise<{ row: ConsoleSignInCode | undefined; now: Date }> {
  const [row] = (await trx('console_sign_in_codes').where('code_hash', codeHash).delete().returning('*')) as ConsoleSignInCode[];
  const { rows } = (await trx.raw('select now() as now')) as { rows: Array<{ now: Date }> };
  return { row, now: rows[0]!.now };
}
