/**
 * `tenantctl token`: mints a token with the local signing key (local auth provider only). The
 * minting and the option parsers are shared with `tenantctl console` (console.ts).
 */
import path from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { readLocalKeys, signLocalToken } from '../auth/local-keys';
import type { GlobalOptions } from './api';
import type { CommandHelpers } from './command';
import { CliError } from './errors';

const MAX_TTL_SECONDS = 30 * 24 * 3600;

/** Who a minted token names, shared by `token` and `console`. */
export interface MintOptions {
  sub: string;
  email?: string;
  name?: string;
  tenant?: string;
  admin: boolean;
  ttlSeconds: number;
  extraClaims?: Record<string, unknown>;
}

/**
 * Signs a token with the local key in the service's data directory (--data-dir), with the admin
 * role and claim and the audience the service checks (the hidden global options).
 */
export function mintLocalToken(g: GlobalOptions, opts: MintOptions): string {
  const dir = path.resolve(g.dataDir);
  const keys = readLocalKeys(dir);
  if (!keys) {
    throw new CliError(
      `no local signing key in ${dir}: start the service once first (npm start) so it creates one, or point SERVICE_DATA_DIR / --data-dir at the service's data directory`,
    );
  }
  return signLocalToken(keys, {
    sub: opts.sub,
    email: opts.email,
    name: opts.name,
    tenant: opts.tenant,
    admin: opts.admin,
    ttlSeconds: opts.ttlSeconds,
    adminRole: g.adminRole,
    roleClaim: g.adminRoleClaim,
    extraClaims: { ...(opts.extraClaims ?? {}), ...(g.audience ? { aud: g.audience } : {}) },
  });
}

/** The options naming who a minted token is for, shared by `token` and `console` (whose --sub has a default with --admin). */
export function addIdentityOptions(cmd: Command, sub: 'required' | 'optional' = 'required'): Command {
  return (sub === 'required' ? cmd.requiredOption('--sub <subject>', 'subject (sub claim)') : cmd.option('--sub <subject>', 'subject (sub claim; default console-admin with --admin)'))
    .option('--email <email>', 'email claim (marked verified)')
    .option('--name <name>', 'name claim');
}

/** Registers the `token` command on `program`. */
export function registerTokenCommand(program: Command, h: CommandHelpers): void {
  const { globals, print } = h;
  addIdentityOptions(program.command('token').description('mint a token with the local signing key (local auth provider only)'))
    .option('--tenant <slug>', 'tenant claim: the tenant the token names')
    .option('--admin', 'give the token the platform admin role', false)
    .option('--ttl <duration>', 'lifetime: seconds, or a number with s, m, h or d (at most 30d)', ttlParser(MAX_TTL_SECONDS, '30d'), 3600)
    .option(
      '--claim <name=json>',
      'add a claim of any shape, e.g. \'org=["acme","globex"]\' or \'o={"id":"org_1","slg":"acme"}\' (repeatable; a value that is not JSON is a string)',
      parseClaim,
      {} as Record<string, unknown>,
    )
    .action((opts: { sub: string; email?: string; name?: string; tenant?: string; admin: boolean; ttl: number; claim: Record<string, unknown> }, cmd: Command) => {
      print(`${mintLocalToken(globals(cmd), { ...opts, ttlSeconds: opts.ttl, extraClaims: opts.claim })}\n`);
    });
}

/** Claims the other options and the signer own. */
const RESERVED_CLAIMS = new Set(['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti']);

/** `name=<json>` into the claims collected so far (commander's repeatable-option reducer). */
function parseClaim(v: string, previous: Record<string, unknown>): Record<string, unknown> {
  const eq = v.indexOf('=');
  const name = eq > 0 ? v.slice(0, eq) : '';
  if (name === '') throw new InvalidArgumentError(`--claim must be name=<json>, e.g. org='["acme","globex"]'; got '${v}'.`);
  if (RESERVED_CLAIMS.has(name)) throw new InvalidArgumentError(`--claim cannot set '${name}': the token's ${name} comes from its own option or the signer.`);
  const raw = v.slice(eq + 1);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    value = raw;
  }
  return { ...previous, [name]: value };
}

/** A commander parser of a lifetime: seconds, or a number with s, m, h or d, from 1 s to `max` seconds. */
export function ttlParser(max: number, maxLabel: string, flag = '--ttl'): (v: string) => number {
  return (v) => {
    const m = /^(\d+)([smhd]?)$/.exec(v.trim());
    const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 } as const;
    const seconds = m ? Number(m[1]) * unit[m[2] as keyof typeof unit] : NaN;
    if (!Number.isFinite(seconds) || seconds < 1 || seconds > max) {
      throw new InvalidArgumentError(`${flag} must be a positive duration such as 900, 15m or 1h, at most ${maxLabel}.`);
    }
    return seconds;
  };
}
