/**
 * `tenantctl tenant token`: the caller's own tenant token (POST /api/tenant/token), for trying a
 * product's verification by hand or from a script. Needs the member's token (--token or
 * SERVICE_TOKEN): tenant tokens are issued to members, not to the admin token tenantctl mints.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers } from './command';

/** Registers `token` on the `tenant` command group. */
export function registerTenantTokenCommand(tenant: Command, h: CommandHelpers): void {
  const { globals, print } = h;
  tenant
    .command('token')
    .description("print your own tenant token for your product (a member's --token / SERVICE_TOKEN)")
    .option('--tenant <slug>', 'the tenant (sent as X-Tenant; default: the one your token names)', parseTenant)
    .addOption(new Option('--format <format>', 'token: the JWT alone; json: the whole answer').choices(['token', 'json']).default('token'))
    .action(async (opts: { tenant?: string; format: 'token' | 'json' }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const issued = await call(
        conn,
        'tenant token',
        sdk.issueTenantToken({
          client: conn.client,
          headers: opts.tenant ? { 'X-Tenant': opts.tenant } : undefined,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }),
        { forbidden: conn.tokenSource === 'given' ? '' : ' (tenant tokens are for members: pass the member\'s token with --token or SERVICE_TOKEN)' },
      );
      print(opts.format === 'json' ? `${JSON.stringify(issued, null, 2)}\n` : `${issued.access_token}\n`);
    });
}

function parseTenant(v: string): string {
  if (!/^[a-z0-9-]{1,255}$/.test(v)) throw new InvalidArgumentError('--tenant must be a slug: lowercase letters, digits and hyphens.');
  return v;
}
