/**
 * `tenantctl permissions list|create|delete` (the catalogue, platform admin) and
 * `tenantctl roles list|get|create|update|delete` on the generated client: platform roles, or
 * with `--tenant` the roles of that tenant (its own, and the platform roles it lists). Rules:
 * docs/roles.md.
 */
import { type Command, InvalidArgumentError } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Permission, Role } from '../../generated/types.gen';
import { PERMISSION_KEY_MAX, PERMISSION_KEY_PATTERN, ROLE_KEY_PATTERN } from '../context/roles';
import { call, connect, REQUEST_TIMEOUT_MS, type Connection } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_ERROR } from './errors';
import { renderPairs, renderTable } from './output';
import type { Prompt } from './tenant-admin';
import { tenantHeaders, tenantOption } from './tenant-scope';

function parsePermissionKey(v: string): string {
  if (v.length > PERMISSION_KEY_MAX || !PERMISSION_KEY_PATTERN.test(v)) {
    throw new InvalidArgumentError(`expected a permission key: segments of a-z 0-9 . _ - joined by ':' (at most ${PERMISSION_KEY_MAX}), e.g. invoices:write.`);
  }
  return v;
}

function parseRoleKey(v: string): string {
  if (!ROLE_KEY_PATTERN.test(v)) throw new InvalidArgumentError('expected a role key: 1-64 lowercase letters, digits and hyphens.');
  return v;
}

function parsePermissionList(v: string): string[] {
  const keys = v
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of keys) parsePermissionKey(k);
  return keys;
}

const timeout = () => AbortSignal.timeout(REQUEST_TIMEOUT_MS);

export function registerPermissionsCommands(program: Command, h: CommandHelpers, prompt: Prompt | undefined): void {
  const { globals, styles, formatOption, print } = h;
  const permissions = program.command('permissions').description('list, define and delete the permission catalogue (platform admin)');

  permissions
    .command('list')
    .description('list every permission, by key')
    .addOption(formatOption())
    .action(async (opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const { permissions: list } = await call(conn, 'permissions list', sdk.listPermissions({ client: conn.client, signal: timeout() }));
      if (opts.format === 'json') return print(`${JSON.stringify({ permissions: list }, null, 2)}\n`);
      if (!list.length) return print('No permissions.\n');
      print(
        renderTable<Permission>(
          list,
          [
            { header: 'KEY', value: (p) => p.key },
            // The service's own tenant: permissions (docs/roles.md#system-permissions), granted like any other.
            { header: 'SYSTEM', value: (p) => (p.system ? 'yes' : '-') },
            { header: 'DESCRIPTION', value: (p) => p.description || '-' },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} permission${list.length === 1 ? '' : 's'}\n`);
    });

  permissions
    .command('create')
    .description('define a permission (e.g. invoices:write)')
    .argument('<key>', 'the permission key', parsePermissionKey)
    .option('--description <text>', 'what it lets one do')
    .addOption(formatOption())
    .action(async (key: string, opts: { description?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const body = { key, ...(opts.description !== undefined ? { description: opts.description } : {}) };
      const made = await call(conn, 'permissions create', sdk.createPermission({ client: conn.client, body, signal: timeout() }));
      if (opts.format === 'json') return print(`${JSON.stringify(made, null, 2)}\n`);
      print(`${styles(cmd).out.green(`Permission ${made.key} created.`)}\n`);
    });

  permissions
    .command('delete')
    .description('delete a permission: every role that held it, platform and tenant, loses it at once; asks first unless --yes')
    .argument('<key>', 'the permission key', parsePermissionKey)
    .option('--yes', 'delete without asking (needed when there is no terminal)', false)
    .addOption(formatOption())
    .addHelpText('after', '\nWithout --yes and without a terminal to ask on, nothing is deleted and the exit status is 2.')
    .action(async (key: string, opts: { yes: boolean; format: Format }, cmd: Command) => {
      // Refuse before any request: a script that forgot --yes must not half-run.
      if (!opts.yes && !prompt) {
        throw new CliError(`refusing to delete permission '${key}' without confirmation: there is no terminal to ask on; pass --yes to delete it`, EXIT_ERROR);
      }
      const conn = connect(globals(cmd));
      if (!opts.yes) {
        const platform = await call(conn, 'permissions delete', sdk.listPlatformRoles({ client: conn.client, signal: timeout() }));
        const holders = platform.roles.filter((r) => r.permissions.includes(key)).map((r) => r.key);
        h.progress(
          `Deleting permission '${key}' takes it out of every role that holds it, at once: ` +
            `${holders.length ? `platform role${holders.length === 1 ? '' : 's'} ${holders.join(', ')}` : 'no platform role'}, and any tenant's own role that holds it.`,
        );
        const typed = (await prompt!(`Type the permission's key (${key}) to delete it, anything else to cancel: `)).trim();
        if (typed !== key) throw new CliError(typed ? `not deleted: '${typed}' is not the key '${key}'` : 'not deleted: cancelled', EXIT_ERROR);
      }
      const gone = await call(conn, 'permissions delete', sdk.deletePermission({ client: conn.client, path: { permission_key: key }, signal: timeout() }));
      if (opts.format === 'json') return print(`${JSON.stringify(gone, null, 2)}\n`);
      const roles = gone.removed_from_roles;
      const platform = roles.filter((r) => r.tenant_id === null).map((r) => r.role_key);
      const tenants = roles.filter((r) => r.tenant_id !== null);
      print(`${styles(cmd).out.green(`Permission ${key} deleted; taken out of ${roles.length} role${roles.length === 1 ? '' : 's'}.`)}\n`);
      if (platform.length) print(`platform roles: ${platform.join(', ')}\n`);
      for (const r of tenants) print(`tenant ${r.tenant_id}: ${r.role_key}\n`);
    });
}

/** `roles …`: a platform role without --tenant, the tenant's with it. */
export function registerRolesCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const roles = program.command('roles').description("list, create, change and delete platform roles, or with --tenant a tenant's own roles");
  const printRole = (cmd: Command, format: Format, r: Role, headline: string) => {
    if (format === 'json') return print(`${JSON.stringify(r, null, 2)}\n`);
    const { out } = styles(cmd);
    print(`${out.green(headline)}\n`);
    print(renderPairs(rolePairs(r), out));
  };

  roles
    .command('list')
    .description('list the platform roles, or with --tenant every role available in that tenant, with their permissions')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const { roles: list } = opts.tenant
        ? await call(conn, 'roles list', sdk.listTenantRoles({ client: conn.client, headers: tenantHeaders(opts.tenant), signal: timeout() }), { forbidden: null })
        : await call(conn, 'roles list', sdk.listPlatformRoles({ client: conn.client, signal: timeout() }));
      if (opts.format === 'json') return print(`${JSON.stringify({ roles: list }, null, 2)}\n`);
      print(
        renderTable<Role>(
          list,
          [
            { header: 'KEY', value: (r) => r.key },
            { header: 'SCOPE', value: (r) => (r.built_in ? `${r.scope} (built in)` : r.scope) },
            { header: 'NAME', value: (r) => r.name },
            { header: 'PERMISSIONS', value: (r) => r.permissions.join(' ') || '-' },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} role${list.length === 1 ? '' : 's'}\n`);
    });

  roles
    .command('get')
    .description('show one role and its permissions')
    .argument('<key>', 'the role key', parseRoleKey)
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (key: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const r = await getRole(conn, key, opts.tenant);
      printRole(cmd, opts.format, r, `Role ${r.key}`);
    });

  roles
    .command('create')
    .description('create a role from catalogue permissions')
    .argument('<key>', 'the role key', parseRoleKey)
    .requiredOption('--name <name>', 'a display name')
    .option('--description <text>', 'what the role is for')
    .option('--permissions <keys>', 'comma-separated catalogue permission keys', parsePermissionList, [] as string[])
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (key: string, opts: { name: string; description?: string; permissions: string[]; tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const body = { key, name: opts.name, permissions: opts.permissions, ...(opts.description !== undefined ? { description: opts.description } : {}) };
      const r = opts.tenant
        ? await call(conn, 'roles create', sdk.createTenantRole({ client: conn.client, headers: tenantHeaders(opts.tenant), body, signal: timeout() }), { forbidden: null })
        : await call(conn, 'roles create', sdk.createPlatformRole({ client: conn.client, body, signal: timeout() }));
      printRole(cmd, opts.format, r, `Role ${r.key} created.`);
    });

  roles
    .command('update')
    .description('change a role: the options given replace those fields, the others are kept')
    .argument('<key>', 'the role key', parseRoleKey)
    .option('--name <name>', 'a new display name')
    .option('--description <text>', 'a new description')
    .option('--permissions <keys>', 'the complete new list of permission keys, comma-separated ("" for none)', parsePermissionList)
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (key: string, opts: { name?: string; description?: string; permissions?: string[]; tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      // The API replaces the whole role: read it, change what was asked, write it back.
      const current = await getRole(conn, key, opts.tenant);
      const body = { name: opts.name ?? current.name, description: opts.description ?? current.description, permissions: opts.permissions ?? current.permissions };
      const r = opts.tenant
        ? await call(conn, 'roles update', sdk.updateTenantRole({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { role_key: key }, body, signal: timeout() }), { forbidden: null })
        : await call(conn, 'roles update', sdk.updatePlatformRole({ client: conn.client, path: { role_key: key }, body, signal: timeout() }));
      printRole(cmd, opts.format, r, `Role ${r.key} updated.`);
    });

  roles
    .command('delete')
    .description('delete a role nobody holds (members or pending invitations)')
    .argument('<key>', 'the role key', parseRoleKey)
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (key: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const r = opts.tenant
        ? await call(conn, 'roles delete', sdk.deleteTenantRole({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { role_key: key }, signal: timeout() }), { forbidden: null })
        : await call(conn, 'roles delete', sdk.deletePlatformRole({ client: conn.client, path: { role_key: key }, signal: timeout() }));
      if (opts.format === 'json') return print(`${JSON.stringify(r, null, 2)}\n`);
      print(`${styles(cmd).out.green(`Role ${key} deleted.`)}\n`);
    });
}

async function getRole(conn: Connection, key: string, tenant: string | undefined): Promise<Role> {
  return tenant
    ? call(conn, 'roles get', sdk.getTenantRole({ client: conn.client, headers: tenantHeaders(tenant), path: { role_key: key }, signal: timeout() }), { forbidden: null })
    : call(conn, 'roles get', sdk.getPlatformRole({ client: conn.client, path: { role_key: key }, signal: timeout() }));
}

function rolePairs(r: Role): Array<[string, string]> {
  return [
    ['key', r.key],
    ['name', r.name],
    ['description', r.description || '-'],
    ['scope', r.scope],
    ['built_in', String(r.built_in)],
    ['permissions', r.permissions.join(' ') || '-'],
    ['updated_at', r.updated_at],
  ];
}
