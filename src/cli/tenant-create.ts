/**
 * `tenantctl tenant create`: a tenant (POST /api/setup/tenant), retry-safe with --idempotency-key.
 */
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { TenantSettings } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { renderPairs } from './output';
import { parseName, parseSettings, parseSlug } from './tenant-flags';

/** Registers `create` on the `tenant` command group. */
export function registerTenantCreateCommand(tenant: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  tenant
    .command('create')
    .description('create a tenant')
    .requiredOption('--name <name>', 'display name (1-255 characters)', parseName)
    .requiredOption('--slug <slug>', 'unique slug: lowercase letters, digits and hyphens', parseSlug('--slug'))
    .option('--sample-data', 'add sample boards, generations, a provider configuration and a credit grant', false)
    .option('--settings <json>', 'tenant settings as a JSON object, e.g. \'{"billing_plan":"pro"}\'', parseSettings)
    .option('--idempotency-key <key>', 'retry-safe key: a replay answers the first result')
    .addOption(formatOption())
    .action(async (opts: { name: string; slug: string; sampleData: boolean; settings?: TenantSettings; idempotencyKey?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const created = await call(
        conn,
        'tenant create',
        sdk.createTenant({
          client: conn.client,
          body: { name: opts.name, slug: opts.slug, include_sample_data: opts.sampleData, ...(opts.settings ? { settings: opts.settings } : {}) },
          headers: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : undefined,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }),
      );
      if (opts.format === 'json') return print(`${JSON.stringify(created, null, 2)}\n`);
      const { out } = styles(cmd);
      print(`${created.existing ? created.message : out.green(created.message)}\n`);
      print(
        renderPairs(
          [
            ['tenant_id', created.tenant_id],
            ['name', created.name],
            ['slug', created.slug],
            ['existing', String(created.existing)],
          ],
          out,
        ),
      );
    });
}
