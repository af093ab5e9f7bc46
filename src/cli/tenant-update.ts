/**
 * `tenantctl tenant update`: name, slug, settings, status and membership policy (PUT /api/setup/tenant/{tenant_id}).
 */
import { type Command, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { TenantSettings, TenantStatusUpdate } from '../../generated/types.gen';
import { SETTABLE_STATUSES } from '../context/tenant-status';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError } from './errors';
import { renderPairs } from './output';
import { parseBool, parseIssuer, parseName, parseSettings, parseSlug } from './tenant-flags';
import { resolveTenantId, tenantPairs } from './tenant-lookup';

/** Registers `update` on the `tenant` command group. */
export function registerTenantUpdateCommand(tenant: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  tenant
    .command('update')
    .description("change a tenant: name, slug, settings, status (approve), and its membership policy (whether callers named by the identity provider's claims become members)")
    .argument('<tenant>', 'slug or tenant id')
    .option('--name <name>', 'new display name (1-255 characters)', parseName)
    .option('--slug <slug>', 'new slug (the default tenant keeps its slug)', parseSlug('--slug'))
    .option('--settings <json>', 'settings as a JSON object; replaces the stored object', parseSettings)
    .addOption(new Option('--status <status>', 'active approves a pending tenant').choices(SETTABLE_STATUSES))
    .option('--provision-from-claims <bool>', 'true: callers whose token names this tenant become members on first use; false: invitation only', parseBool)
    .option('--claims-issuer <url>', "provision only from tokens of this issuer (their 'iss')", parseIssuer)
    .option('--any-issuer', 'lift the issuer restriction (claims_issuer null)', false)
    .option('--roles-from-claims <bool>', "true: the member's role follows the token's role claim on every request; false: ignore it", parseBool)
    .addOption(formatOption())
    .action(
      async (
        ref: string,
        opts: {
          name?: string;
          slug?: string;
          settings?: TenantSettings;
          status?: TenantStatusUpdate;
          provisionFromClaims?: boolean;
          claimsIssuer?: string;
          anyIssuer: boolean;
          rolesFromClaims?: boolean;
          format: Format;
        },
        cmd: Command,
      ) => {
        const policyChange = opts.provisionFromClaims !== undefined || opts.claimsIssuer !== undefined || opts.anyIssuer || opts.rolesFromClaims !== undefined;
        if (!policyChange && opts.name === undefined && opts.slug === undefined && opts.settings === undefined && opts.status === undefined) {
          throw new CliError(
            'nothing to change: give --name, --slug, --settings, --status, --provision-from-claims true|false, --claims-issuer <url>, --any-issuer or --roles-from-claims true|false',
          );
        }
        if (opts.claimsIssuer !== undefined && opts.anyIssuer) throw new CliError('--claims-issuer and --any-issuer contradict each other');
        const conn = connect(globals(cmd));
        const tenantId = await resolveTenantId(conn, ref);
        const updated = await call(
          conn,
          'tenant update',
          sdk.updateTenant({
            client: conn.client,
            path: { tenant_id: tenantId },
            body: {
              ...(opts.name !== undefined ? { name: opts.name } : {}),
              ...(opts.slug !== undefined ? { slug: opts.slug } : {}),
              ...(opts.settings !== undefined ? { settings: opts.settings } : {}),
              ...(opts.status !== undefined ? { status: opts.status } : {}),
              ...(policyChange
                ? {
                    membership_policy: {
                      ...(opts.provisionFromClaims !== undefined ? { provision_from_claims: opts.provisionFromClaims } : {}),
                      ...(opts.claimsIssuer !== undefined ? { claims_issuer: opts.claimsIssuer } : {}),
                      ...(opts.anyIssuer ? { claims_issuer: null } : {}),
                      ...(opts.rolesFromClaims !== undefined ? { roles_from_claims: opts.rolesFromClaims } : {}),
                    },
                  }
                : {}),
            },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          }),
        );
        if (opts.format === 'json') return print(`${JSON.stringify(updated, null, 2)}\n`);
        const { out } = styles(cmd);
        print(`${out.green(`Tenant '${updated.name}' (${updated.slug}) updated.`)}\n`);
        print(renderPairs(tenantPairs(updated), out));
      },
    );
}
