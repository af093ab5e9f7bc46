/**
 * `tenantctl domains add|verify|list|remove|set`: a tenant's verified domains (docs/domains.md)
 * on the generated client, for its admins (`--tenant`, sent as X-Tenant). `add` prints the TXT
 * record to publish; `verify` asks the service to look it up; `set` sets who joins by it.
 */
import { type Command, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Domain } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError } from './errors';
import { renderPairs, renderTable, type Style } from './output';
import { resolveTenantId } from './tenant-lookup';
import { roleOption, tenantHeaders, tenantOption } from './tenant-scope';

// A verify waits for DNS (5 s at most on the server) on top of the request itself.
const timeout = () => AbortSignal.timeout(REQUEST_TIMEOUT_MS + 5_000);

function domainPairs(d: Domain, out: Style): string {
  return renderPairs(
    [
      ['domain', d.domain === d.domain_ascii ? d.domain : `${d.domain} (${d.domain_ascii})`],
      ['status', d.status],
      ['record', `${d.verification.type} ${d.verification.name}`],
      ['value', d.verification.value],
      ['join', d.join === 'none' ? 'none' : `${d.join} as ${d.join_role}`],
      ['verified_at', d.verified_at ?? '-'],
      ['checked_at', d.checked_at ?? '-'],
    ],
    out,
  );
}

export function registerDomainsCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const domains = program.command('domains').description("a tenant's verified domains: claim, prove by DNS, set who joins by them (tenant admin)");
  const show = (cmd: Command, format: Format, d: Domain, headline: string) => {
    if (format === 'json') return print(`${JSON.stringify(d, null, 2)}\n`);
    const { out } = styles(cmd);
    print(`${out.green(headline)}\n`);
    print(domainPairs(d, out));
  };

  domains
    .command('add')
    .description('claim a domain; prints the TXT record to publish at your DNS provider')
    .argument('<domain>', 'the domain, e.g. acme.com')
    .addOption(tenantOption())
    .addOption(new Option('--verified', 'platform admins: add it verified without DNS, for a customer you know (the event says so); needs --tenant'))
    .addOption(formatOption())
    .action(async (domain: string, opts: { tenant?: string; verified?: boolean; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      if (opts.verified) {
        if (!opts.tenant) throw new CliError('domains add --verified needs --tenant <slug or id>: the tenant the domain is verified for.', 2);
        const tenantId = await resolveTenantId(conn, opts.tenant);
        const d = await call(conn, 'domains add', sdk.markDomainVerified({ client: conn.client, path: { tenant_id: tenantId }, body: { domain, verified: true }, signal: timeout() }), { forbidden: null });
        return show(cmd, opts.format, d, `Domain ${d.domain} added verified for tenant ${opts.tenant} (by a platform admin, without DNS).`);
      }
      const d = await call(conn, 'domains add', sdk.claimDomain({ client: conn.client, headers: tenantHeaders(opts.tenant), body: { domain }, signal: timeout() }), { forbidden: null });
      show(cmd, opts.format, d, `Domain ${d.domain} claimed. Publish this TXT record, then run: tenantctl domains verify ${d.domain_ascii}`);
    });

  domains
    .command('verify')
    .description('look up the TXT record now: verified when it carries exactly the value (exit 1 naming what DNS answered otherwise)')
    .argument('<domain>', 'the domain')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (domain: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const d = await call(conn, 'domains verify', sdk.verifyDomain({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { domain }, signal: timeout() }), { forbidden: null });
      show(cmd, opts.format, d, `Domain ${d.domain} verified.`);
    });

  domains
    .command('list')
    .description("list the tenant's domains with their status and join policy")
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const { domains: list } = await call(conn, 'domains list', sdk.listDomains({ client: conn.client, headers: tenantHeaders(opts.tenant), signal: timeout() }), { forbidden: null });
      if (opts.format === 'json') return print(`${JSON.stringify({ domains: list }, null, 2)}\n`);
      if (!list.length) return print('No domains: claim one with tenantctl domains add <domain>.\n');
      print(
        renderTable<Domain>(
          list,
          [
            { header: 'DOMAIN', value: (d) => d.domain },
            { header: 'STATUS', value: (d) => d.status },
            { header: 'JOIN', value: (d) => (d.join === 'none' ? 'none' : `${d.join} as ${d.join_role}`) },
            { header: 'CHECKED', value: (d) => d.checked_at ?? 'never' },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} domain${list.length === 1 ? '' : 's'}\n`);
    });

  domains
    .command('remove')
    .description('remove a domain: nobody joins, resolves or binds by it any more (members who joined stay)')
    .argument('<domain>', 'the domain')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (domain: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      await call(conn, 'domains remove', sdk.removeDomain({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { domain }, signal: timeout() }), { forbidden: null });
      if (opts.format === 'json') return print(`${JSON.stringify({ domain, removed: true }, null, 2)}\n`);
      print(`${styles(cmd).out.green(`Domain ${domain} removed.`)}\n`);
    });

  domains
    .command('set')
    .description('set who joins by a verified domain: none, suggest (they may join) or automatic (they join at their first request)')
    .argument('<domain>', 'the domain')
    .addOption(new Option('--join <policy>', 'none, suggest or automatic').choices(['none', 'suggest', 'automatic']))
    .addOption(roleOption('the role people joining by the domain get (never admin)', false))
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (domain: string, opts: { join?: 'none' | 'suggest' | 'automatic'; role?: string; tenant?: string; format: Format }, cmd: Command) => {
      if (opts.join === undefined && opts.role === undefined) throw new CliError('domains set: pass --join and/or --role.');
      const conn = connect(globals(cmd));
      const body = { ...(opts.join !== undefined ? { join: opts.join } : {}), ...(opts.role !== undefined ? { join_role: opts.role } : {}) };
      const d = await call(conn, 'domains set', sdk.updateDomain({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { domain }, body, signal: timeout() }), { forbidden: null });
      show(cmd, opts.format, d, `Domain ${d.domain}: join ${d.join}${d.join === 'none' ? '' : ` as ${d.join_role}`}.`);
    });
}
