/**
 * `tenantctl scim tokens create|list|revoke`, `tenantctl scim settings [get]|set` and
 * `tenantctl scim users`: a tenant's
 * directory sync (docs/directory-sync.md) on the generated client, for its admins (`--tenant`,
 * sent as X-Tenant; the minted platform admin token is accepted as an admin of every tenant).
 * `tokens create` prints the token once: the service keeps only its hash.
 */
import { type Command, InvalidArgumentError } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { DirectoryUser, ScimSettings, ScimToken } from '../../generated/types.gen';
import { ROLE_KEY_PATTERN } from '../context/roles';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError } from './errors';
import { renderPairs, renderTable, type Style } from './output';
import { allPages, parsePageSize, tenantHeaders, tenantOption, UUID } from './tenant-scope';

type Mapping = ScimSettings['group_roles'][number];

const TOKEN_WARNING = 'Store this token now: it is shown only once. Paste it with the base_url into the directory (Entra ID: Secret Token; Okta: API Token).';

const timeout = () => AbortSignal.timeout(REQUEST_TIMEOUT_MS);

function parseTokenId(v: string): string {
  if (!UUID.test(v)) throw new InvalidArgumentError('expected a token id (UUID), as printed by scim tokens create or list.');
  return v.toLowerCase();
}

/**
 * `--group-role <group>=<role>`, repeatable, in order. A group's display name may hold '=', a
 * role key never does: the last '=' separates them.
 */
function collectGroupRole(v: string, previous: Mapping[] = []): Mapping[] {
  const at = v.lastIndexOf('=');
  const group = at < 0 ? '' : v.slice(0, at).trim();
  const role = at < 0 ? '' : v.slice(at + 1).trim();
  if (!group || !ROLE_KEY_PATTERN.test(role)) {
    throw new InvalidArgumentError("expected <group>=<role>: the group's display name as the directory sends it, then a role key (tenantctl roles list --tenant SLUG lists them).");
  }
  return [...previous, { group, role }];
}

function settingsPairs(st: ScimSettings, out: Style): string {
  return renderPairs(
    [
      ['base_url', st.base_url],
      ['enabled', String(st.enabled)],
      ['external_id_claim', st.external_id_claim ?? '-'],
      ['group_roles', st.group_roles.length ? `${st.group_roles.length} (first match wins)` : 'none: every directory member is a member'],
    ],
    out,
  );
}

export function registerScimCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const scim = program.command('scim').description("a tenant's directory sync (SCIM 2.0): its tokens and settings (tenant admin)");
  const tokens = scim.command('tokens').description('create, list and revoke the SCIM tokens a directory provisions the tenant with');

  const printSettings = (cmd: Command, format: Format, st: ScimSettings, headline?: string) => {
    if (format === 'json') return print(`${JSON.stringify(st, null, 2)}\n`);
    const { out } = styles(cmd);
    if (headline) print(`${out.green(headline)}\n`);
    print(settingsPairs(st, out));
    if (st.group_roles.length) {
      print('\n');
      print(
        renderTable(
          st.group_roles.map((m, i) => ({ ...m, n: i + 1 })),
          [
            { header: '#', value: (m) => String(m.n), right: true },
            { header: 'GROUP', value: (m) => m.group },
            { header: 'ROLE', value: (m) => m.role },
          ],
          out,
        ),
      );
    }
  };

  tokens
    .command('create')
    .description('create a SCIM token; prints it once (the service keeps only its hash)')
    .option('--description <text>', 'which directory uses it (at most 200 characters)')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { description?: string; tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const made = await call(
        conn,
        'scim tokens create',
        sdk.createScimToken({ client: conn.client, headers: tenantHeaders(opts.tenant), body: opts.description !== undefined ? { description: opts.description } : {}, signal: timeout() }),
        { forbidden: null },
      );
      if (opts.format === 'json') {
        h.progress(TOKEN_WARNING);
        return print(`${JSON.stringify(made, null, 2)}\n`);
      }
      const { out } = styles(cmd);
      print(`${out.green(`SCIM token ${made.token_id} created.`)}\n`);
      print(
        renderPairs(
          [
            ['token_id', made.token_id],
            ['description', made.description ?? '-'],
            ['created_at', made.created_at],
            ['token', made.token],
          ],
          out,
        ),
      );
      print(`${out.bold(TOKEN_WARNING)}\n`);
    });

  tokens
    .command('list')
    .description("list the tenant's SCIM tokens, with when each was last used (never the tokens themselves)")
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const { tokens: list } = await call(conn, 'scim tokens list', sdk.listScimTokens({ client: conn.client, headers: tenantHeaders(opts.tenant), signal: timeout() }), { forbidden: null });
      if (opts.format === 'json') return print(`${JSON.stringify({ tokens: list }, null, 2)}\n`);
      if (!list.length) return print('No SCIM tokens: directory sync is off.\n');
      print(
        renderTable<ScimToken>(
          list,
          [
            { header: 'TOKEN ID', value: (t) => t.token_id },
            { header: 'DESCRIPTION', value: (t) => t.description ?? '-' },
            { header: 'CREATED', value: (t) => t.created_at },
            { header: 'LAST USED', value: (t) => t.last_used_at ?? 'never' },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} token${list.length === 1 ? '' : 's'}\n`);
    });

  tokens
    .command('revoke')
    .description('revoke a SCIM token: the directory using it is refused at once')
    .argument('<token-id>', 'the token id', parseTokenId)
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (id: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      await call(conn, 'scim tokens revoke', sdk.revokeScimToken({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { token_id: id }, signal: timeout() }), { forbidden: null });
      if (opts.format === 'json') return print(`${JSON.stringify({ token_id: id, revoked: true }, null, 2)}\n`);
      print(`${styles(cmd).out.green(`SCIM token ${id} revoked.`)}\n`);
    });

  scim
    .command('users')
    .description("list every user the tenant's directory provisioned (deactivated and not yet signed in included), following the pages to the end")
    .addOption(tenantOption())
    .option('--limit <n>', 'page size per request (1-1000)', parsePageSize, 100)
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; limit: number; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const users = await allPages(async (cursor) => {
        const page = await call(
          conn,
          'scim users',
          sdk.listDirectoryUsers({ client: conn.client, headers: tenantHeaders(opts.tenant), query: { limit: opts.limit, ...(cursor ? { cursor } : {}) }, signal: timeout() }),
          { forbidden: null },
        );
        return { items: page.users, next_cursor: page.next_cursor };
      });
      if (opts.format === 'json') return print(`${JSON.stringify({ users }, null, 2)}\n`);
      if (!users.length) return print('No directory users.\n');
      print(
        renderTable<DirectoryUser>(
          users,
          [
            { header: 'USER NAME', value: (u) => u.user_name },
            { header: 'ACTIVE', value: (u) => (u.active ? 'yes' : 'no (deactivated)') },
            { header: 'ROLE', value: (u) => u.role },
            { header: 'GROUPS', value: (u) => u.groups.map((g) => g.display_name).join(', ') || '-' },
            { header: 'MEMBER ID', value: (u) => u.member_id ?? 'not signed in yet' },
            { header: 'DIRECTORY USER ID', value: (u) => u.directory_user_id },
          ],
          styles(cmd).out,
        ),
      );
      print(`${users.length} directory user${users.length === 1 ? '' : 's'}\n`);
    });

  const settings = scim.command('settings').description("show or change the tenant's directory settings: base URL, group → role mapping, external id claim");

  settings
    .command('get', { isDefault: true })
    .description('show the settings (the default)')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const st = await call(conn, 'scim settings', sdk.getScimSettings({ client: conn.client, headers: tenantHeaders(opts.tenant), signal: timeout() }), { forbidden: null });
      printSettings(cmd, opts.format, st);
    });

  settings
    .command('set')
    .description('change the settings: the options given replace those fields, the others are kept')
    .option('--group-role <group=role>', 'a mapping, repeatable, in order (first match wins); the whole list is replaced', collectGroupRole)
    .option('--clear-group-roles', 'no mapping: every directory member is a member')
    .option('--external-id-claim <claim>', "the token claim matched against a user's externalId (Entra ID: oid)")
    .option('--clear-external-id-claim', 'match people by verified email only')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(
      async (
        opts: { groupRole?: Mapping[]; clearGroupRoles?: boolean; externalIdClaim?: string; clearExternalIdClaim?: boolean; tenant?: string; format: Format },
        cmd: Command,
      ) => {
        if (opts.groupRole && opts.clearGroupRoles) throw new CliError('--group-role and --clear-group-roles contradict each other: give one.');
        if (opts.externalIdClaim !== undefined && opts.clearExternalIdClaim) throw new CliError('--external-id-claim and --clear-external-id-claim contradict each other: give one.');
        const body: { group_roles?: Mapping[]; external_id_claim?: string | null } = {};
        if (opts.groupRole) body.group_roles = opts.groupRole;
        if (opts.clearGroupRoles) body.group_roles = [];
        if (opts.externalIdClaim !== undefined) body.external_id_claim = opts.externalIdClaim;
        if (opts.clearExternalIdClaim) body.external_id_claim = null;
        if (!Object.keys(body).length) throw new CliError('nothing to change: give --group-role, --clear-group-roles, --external-id-claim or --clear-external-id-claim.');
        const conn = connect(globals(cmd));
        const st = await call(conn, 'scim settings set', sdk.updateScimSettings({ client: conn.client, headers: tenantHeaders(opts.tenant), body, signal: timeout() }), { forbidden: null });
        printSettings(cmd, opts.format, st, 'Directory settings saved.');
      },
    );
}
