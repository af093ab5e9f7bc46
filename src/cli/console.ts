/**
 * `tenantctl console`: a sign-in link for the web console (local auth provider only).
 *
 * It mints the session token with the local key, as `tenantctl token` does, and hands it to the
 * service (`POST /api/console/codes`, with that token as the bearer) for a one-time code. The
 * link carries only the code, in its fragment (`#code=…`), which browsers never send to a
 * server: the console exchanges it once for the token, so the link, once used or expired, signs
 * nobody in, even from browser history (docs/console.md#the-local-provider-tenantctl-console).
 *
 * Only the link goes to stdout (`open "$(tenantctl console --admin)"`); what it signs in as, and
 * until when, goes to stderr.
 */
import { type Command, InvalidArgumentError } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers } from './command';
import { CliError } from './errors';
import { addIdentityOptions, mintLocalToken, ttlParser } from './token';

/** How long the sign-in lasts (the token's lifetime): the console's sign-in page says "15 minutes". */
export const CONSOLE_LINK_TTL_SECONDS = 15 * 60;
const MAX_CONSOLE_LINK_TTL_SECONDS = 12 * 3600;
/** How long the link's one-time code may wait to be opened; the service allows at most 15 minutes. */
export const CONSOLE_CODE_TTL_SECONDS = 5 * 60;
const MAX_CONSOLE_CODE_TTL_SECONDS = 15 * 60;
/** The subject of `--admin` without `--sub`. */
export const DEFAULT_ADMIN_SUBJECT = 'console-admin';

interface ConsoleOptions {
  sub?: string;
  email?: string;
  name?: string;
  tenant?: string;
  admin: boolean;
  ttl: number;
  codeTtl: number;
}

/** Registers the `console` command; `note` writes to stderr whether or not it is a terminal. */
export function registerConsoleCommand(program: Command, h: CommandHelpers, note: (s: string) => void): void {
  addIdentityOptions(program.command('console').description('print a one-time sign-in link for the web console (local auth provider only)'), 'optional')
    .option('--tenant <slug>', 'open the console on this tenant (the link selects it; the token does not name it)', parseSlug)
    .option('--admin', 'sign in with the platform admin role (lands on All tenants)', false)
    .option('--ttl <duration>', 'how long the sign-in lasts once the link is used: seconds, or a number with s, m or h (at most 12h)', ttlParser(MAX_CONSOLE_LINK_TTL_SECONDS, '12h'), CONSOLE_LINK_TTL_SECONDS)
    .option(
      '--code-ttl <duration>',
      'how long the link can wait to be opened: seconds, or a number with s or m (at most 15m)',
      ttlParser(MAX_CONSOLE_CODE_TTL_SECONDS, '15m', '--code-ttl'),
      CONSOLE_CODE_TTL_SECONDS,
    )
    .addHelpText(
      'after',
      `
The link carries a one-time code in its fragment (after #), which browsers never send to a
server. The console exchanges it for the sign-in once: the same link, opened again or found in
browser history, signs nobody in. Only the link is printed on stdout, so it can be passed on:
  xdg-open "$(tenantctl console --admin)"
  xdg-open "$(tenantctl console --sub alice@acme.com --email alice@acme.com --tenant acme)"`,
    )
    .action(async (opts: ConsoleOptions, cmd: Command) => {
      const g = h.globals(cmd);
      const sub = opts.sub ?? (opts.admin ? DEFAULT_ADMIN_SUBJECT : null);
      if (sub === null) throw new CliError('--sub is required without --admin: name who the link signs in (e.g. --sub alice@acme.com).');
      const token = mintLocalToken(g, { sub, email: opts.email, name: opts.name, admin: opts.admin, ttlSeconds: opts.ttl });
      // The service keeps the token sealed under the code; this connection's bearer is that token.
      const conn = connect({ ...g, token });
      const made = await call(conn, 'creating a sign-in code', sdk.createConsoleCode({
          client: conn.client,
          body: { expires_in: Math.min(opts.codeTtl, opts.ttl) },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }),);
      const fragment = new URLSearchParams({
        code: made.code,
        expires: String(Math.floor(Date.parse(made.expires_at) / 1000)),
        ...(opts.tenant ? { tenant: opts.tenant } : {}),
      }).toString();
      // A platform admin lands on All tenants; with --tenant, on that tenant's switch.
      const landing = opts.admin && !opts.tenant ? '/console/admin/tenants' : '/console/';
      const who = opts.email ?? opts.name ?? sub;
      const defaulted = opts.sub === undefined ? ` (subject ${sub}, the default with --admin)` : '';
      note(
        `Sign-in link for ${who}${defaulted}${opts.admin ? ' (platform admin)' : ''}${opts.tenant ? ` on tenant ${opts.tenant}` : ''}: ` +
          `open it within ${describeTtl(made.expires_in)} (until ${isoSeconds(made.expires_at)}); it works once, and the sign-in lasts ${describeTtl(opts.ttl)}. ` +
          `Until it is used, anyone holding it signs in as ${who}.\n`,
      );
      h.print(`${conn.baseUrl}${landing}#${fragment}\n`);
    });
}

/** The console accepts the same slugs as the service (a-z, 0-9 and -). */
function parseSlug(v: string): string {
  if (!/^[a-z0-9-]{1,255}$/.test(v)) throw new InvalidArgumentError(`--tenant must be a tenant slug (a-z, 0-9 and -), got '${v}'.`);
  return v;
}

function isoSeconds(iso: string): string {
  return new Date(iso).toISOString().replace(/\.\d+Z$/, 'Z');
}

function describeTtl(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds % 3600 === 0) return plural(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}
