/**
 * `tenantctl tenant link|unlink`: a tenant's identity links to identity providers' organizations.
 */
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError } from './errors';
import { renderTable } from './output';
import { parseIssuer, parseOrganizationId } from './tenant-flags';
import { resolveTenantId } from './tenant-lookup';

/** Registers `link` and `unlink` on the `tenant` command group. */
export function registerTenantLinksCommand(tenant: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  // Links are a set on the tenant: read it, change it, write it back (PUT replaces the set).
  const linkCommand = (name: 'link' | 'unlink', description: string) =>
    tenant
      .command(name)
      .description(description)
      .argument('<tenant>', 'slug or tenant id')
      .requiredOption('--issuer <url>', "the identity provider's issuer (the tokens' 'iss')", parseIssuer)
      .requiredOption('--organization-id <id>', "the organization's id in the provider's tokens (SERVICE_JWT_TENANT_ID_CLAIM)", parseOrganizationId)
      .addOption(formatOption())
      .action(async (ref: string, opts: { issuer: string; organizationId: string; format: Format }, cmd: Command) => {
        const conn = connect(globals(cmd));
        const tenantId = await resolveTenantId(conn, ref);
        const current = await call(conn, `tenant ${name}`, sdk.getTenant({ client: conn.client, path: { tenant_id: tenantId }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
        const others = (current.identity_links ?? []).filter((l) => l.issuer !== opts.issuer || l.organization_id !== opts.organizationId);
        const links = name === 'link' ? [...others, { issuer: opts.issuer, organization_id: opts.organizationId }] : others;
        if (name === 'unlink' && links.length === (current.identity_links ?? []).length) {
          throw new CliError(`tenant '${current.slug}' has no link to organization '${opts.organizationId}' of ${opts.issuer}`);
        }
        const updated = await call(
          conn,
          `tenant ${name}`,
          sdk.updateTenant({ client: conn.client, path: { tenant_id: tenantId }, body: { identity_links: links }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
        );
        if (opts.format === 'json') return print(`${JSON.stringify(updated, null, 2)}\n`);
        const { out } = styles(cmd);
        print(`${out.green(`Tenant '${updated.name}' (${updated.slug}) ${name === 'link' ? 'linked to' : 'unlinked from'} organization '${opts.organizationId}' of ${opts.issuer}.`)}\n`);
        const now = updated.identity_links ?? [];
        if (!now.length) return print('No identity links.\n');
        print(
          renderTable(
            now,
            [
              { header: 'ISSUER', value: (l) => l.issuer },
              { header: 'ORGANIZATION ID', value: (l) => l.organization_id },
            ],
            out,
          ),
        );
      });
  linkCommand('link', "link a tenant to an identity provider's organization: tokens of that issuer carrying its id resolve to the tenant");
  linkCommand('unlink', "remove a tenant's link to an identity provider's organization");
}
