/**
 * `tenantctl console`: a sign-in link for the web console, signed with the local key (local auth
 * provider only). The token travels in the link's fragment (`/console/#token=…`), which the
 * browser never sends to a server, so no access log or proxy holds it; the console moves it
 * into the tab's sessionStorage and out of the address bar at once.
 *
 * Only the link goes to stdout (`open "$(tenantctl console --sub me --admin)"`); what it signs in
 * as, and until when, goes to stderr.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { parseServiceUrl } from './api';
import type { CommandHelpers } from './command';
import { addIdentityOptions, mintLocalToken, ttlParser } from './token';

/** The link's default lifetime: the console's sign-in page says "15 minutes". */
export const CONSOLE_LINK_TTL_SECONDS = 15 * 60;
const MAX_CONSOLE_LINK_TTL_SECONDS = 12 * 3600;

interface ConsoleOptions {
  sub: string;
  email?: string;
  name?: string;
  tenant?: string;
  admin: boolean;
  ttl: number;
}

/** Registers the `console` command; `note` writes to stderr whether or not it is a terminal. */
export function registerConsoleCommand(program: Command, h: CommandHelpers, note: (s: string) => void): void {
  addIdentityOptions(program.command('console').description('print a sign-in link for the web console (local auth provider only)'))
    .option('--tenant <slug>', 'open the console on this tenant (the link selects it; the token does not name it)', parseSlug)
    .option('--admin', 'sign in with the platform admin role', false)
    .option('--ttl <duration>', 'how long the sign-in lasts: seconds, or a number with s, m or h (at most 12h)', ttlParser(MAX_CONSOLE_LINK_TTL_SECONDS, '12h'), CONSOLE_LINK_TTL_SECONDS)
    .addHelpText(
      'after',
      `
The link carries a token in its fragment (after #), which browsers never send to a server.
Only the link is printed on stdout, so it can be passed on:
  xdg-open "$(tenantctl console --sub alice@acme.com --email alice@acme.com --admin)"`,
    )
    .action((opts: ConsoleOptions, cmd: Command) => {
      const g = h.globals(cmd);
      const base = parseServiceUrl(g.url);
      const token = mintLocalToken(g, { sub: opts.sub, email: opts.email, name: opts.name, admin: opts.admin, ttlSeconds: opts.ttl });
      const fragment = new URLSearchParams({ token, ...(opts.tenant ? { tenant: opts.tenant } : {}) }).toString();
      const who = opts.email ?? opts.name ?? opts.sub;
      const until = new Date(Date.now() + opts.ttl * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
      note(
        `Sign-in link for ${who}${opts.admin ? ' (platform admin)' : ''}${opts.tenant ? ` on tenant ${opts.tenant}` : ''}, valid for ${describeTtl(opts.ttl)} (until ${until}). Open it in a browser; anyone holding it signs in as ${who}.\n`,
      );
      h.print(`${base}/console/#${fragment}\n`);
    });
}

/** The console accepts the same slugs as the service (a-z, 0-9 and -). */
function parseSlug(v: string): string {
  if (!/^[a-z0-9-]{1,255}$/.test(v)) throw new InvalidArgumentError(`--tenant must be a tenant slug (a-z, 0-9 and -), got '${v}'.`);
  return v;
}

function describeTtl(seconds: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (seconds % 3600 === 0) return plural(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return plural(seconds / 60, 'minute');
  return plural(seconds, 'second');
}
