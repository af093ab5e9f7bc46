/**
 * `tenantctl tenant …`: tenants on the generated client (platform admin), one module per
 * subcommand on the shared flag parsers of ./tenant-flags.ts.
 */
import type { Command } from 'commander';
import type { CommandHelpers } from './command';
import { registerTenantAuditCommand } from './tenant-audit';
import { registerTenantCreateCommand } from './tenant-create';
import { registerTenantLinksCommand } from './tenant-link';
import { registerTenantListCommand } from './tenant-list';
import { registerTenantTokenCommand } from './tenant-token';
import { registerTenantUpdateCommand } from './tenant-update';

export { resolveTenantId, tenantPairs } from './tenant-lookup';

/** Registers the `tenant` command group on `program`. */
export function registerTenantCommands(program: Command, h: CommandHelpers): void {
  const tenant = program.command('tenant').description('create, list, get, update, link, delete and audit tenants (platform admin); print your tenant token');
  registerTenantTokenCommand(tenant, h);
  registerTenantCreateCommand(tenant, h);
  registerTenantListCommand(tenant, h);
  registerTenantUpdateCommand(tenant, h);
  registerTenantLinksCommand(tenant, h);
  registerTenantAuditCommand(tenant, h);
}
