/**
 * `tenantctl token`: mints a token with the local signing key (local auth provider only).
 */
import path from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { readLocalKeys, signLocalToken } from '../auth/local-keys';
import type { CommandHelpers } from './command';
import { CliError } from './errors';

const MAX_TTL_SECONDS = 30 * 24 * 3600;

/** Registers the `token` command on `program`. */
export function registerTokenCommand(program: Command, h: CommandHelpers): void {
  const { globals, print } = h;
  program
    .command('token')
    .description('mint a token with the local signing key (local auth provider only)')
    .requiredOption('--sub <subject>', 'subject (sub claim)')
    .option('--email <email>', 'email claim (marked verified)')
    .option('--name <name>', 'name claim')
    .option('--tenant <slug>', 'tenant claim: the tenant the token names')
    .option('--admin', 'give the token the platform admin role', false)
    .option('--ttl <duration>', 'lifetime: seconds, or a number with s, m, h or d (at most 30d)', parseTtl, 3600)
    .action((opts: { sub: string; email?: string; name?: string; tenant?: string; admin: boolean; ttl: number }, cmd: Command) => {
      const g = globals(cmd);
      const dir = path.resolve(g.dataDir);
      const keys = readLocalKeys(dir);
      if (!keys) {
        throw new CliError(
          `no local signing key in ${dir}: start the service once first (npm start) so it creates one, or point SERVICE_DATA_DIR / --data-dir at the service's data directory`,
        );
      }
      const token = signLocalToken(keys, {
        sub: opts.sub,
        email: opts.email,
        name: opts.name,
        tenant: opts.tenant,
        admin: opts.admin,
        ttlSeconds: opts.ttl,
        adminRole: g.adminRole,
        roleClaim: g.adminRoleClaim,
        extraClaims: g.audience ? { aud: g.audience } : undefined,
      });
      print(`${token}\n`);
    });
}

function parseTtl(v: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(v.trim());
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 } as const;
  const seconds = m ? Number(m[1]) * unit[m[2] as keyof typeof unit] : NaN;
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > MAX_TTL_SECONDS) {
    throw new InvalidArgumentError('--ttl must be a positive duration such as 900, 15m, 1h or 7d, at most 30d.');
  }
  return seconds;
}
