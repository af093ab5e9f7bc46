/**
 * `tenantctl members list|add|set-role|remove`: the members of one tenant (`--tenant`, sent as
 * X-Tenant) on the generated client. Who may do what is the server's decision (tenant admins and
 * platform admins; adding a person directly may be reserved to platform admins): a refusal is
 * printed as the server words it, exit 1.
 */
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Member, MemberRole } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS, type Connection } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_REFUSED } from './errors';
import { renderPairs, renderTable, type Style } from './output';
import { allPages, parsePageSize, roleOption, tenantHeaders, tenantOption, UUID } from './tenant-scope';

export function registerMembersCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const members = program.command('members').description("list, add, change the role of and remove a tenant's members (tenant admin)");

  members
    .command('list')
    .description("list the tenant's members, following the pages to the end")
    .addOption(tenantOption())
    .option('--limit <n>', 'page size per request (1-1000)', parsePageSize, 100)
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; limit: number; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const list = await listAll(conn, opts.tenant, opts.limit);
      if (opts.format === 'json') return print(`${JSON.stringify({ members: list }, null, 2)}\n`);
      if (!list.length) return print('No members.\n');
      print(
        renderTable(
          list,
          [
            { header: 'USER ID', value: (m) => m.user_id },
            { header: 'ROLE', value: (m) => m.role },
            { header: 'EMAIL', value: (m) => m.email ?? '-' },
            { header: 'NAME', value: (m) => m.display_name ?? '-' },
            { header: 'SUBJECT', value: (m) => m.subject },
            { header: 'ISSUER', value: (m) => m.issuer },
            { header: 'JOINED', value: (m) => m.created_at },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} member${list.length === 1 ? '' : 's'}\n`);
    });

  members
    .command('add')
    .description('add a person to the tenant directly by issuer and subject (the server may reserve this to platform admins; invite people otherwise)')
    .requiredOption('--subject <sub>', "the person's subject ('sub' claim)")
    .requiredOption('--email <email>', "the person's email")
    .addOption(roleOption('the role in the tenant', true))
    .option('--issuer <url>', "the person's token issuer (default: the issuer of the caller's token)")
    .option('--display-name <name>', 'a display name')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(
      async (opts: { subject: string; email: string; role: MemberRole; issuer?: string; displayName?: string; tenant?: string; format: Format }, cmd: Command) => {
        const conn = connect(globals(cmd));
        const added = await call(
          conn,
          'members add',
          sdk.addMember({
            client: conn.client,
            headers: tenantHeaders(opts.tenant),
            body: {
              subject: opts.subject,
              email: opts.email,
              role: opts.role,
              ...(opts.issuer !== undefined ? { issuer: opts.issuer } : {}),
              ...(opts.displayName !== undefined ? { display_name: opts.displayName } : {}),
            },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          }),
          { forbidden: null },
        );
        printMember(h, cmd, opts.format, added, `Member ${added.email ?? added.subject} added as ${added.role}.`);
      },
    );

  members
    .command('set-role')
    .description("change a member's role (the last admin cannot be demoted)")
    .argument('<member>', "the member's user id, or their email")
    .addOption(roleOption('the new role', true))
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (ref: string, opts: { role: MemberRole; tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const userId = await resolveMember(conn, opts.tenant, ref);
      const updated = await call(
        conn,
        'members set-role',
        sdk.updateMemberRole({
          client: conn.client,
          headers: tenantHeaders(opts.tenant),
          path: { user_id: userId },
          body: { role: opts.role },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }),
        { forbidden: null },
      );
      printMember(h, cmd, opts.format, updated, `Member ${updated.email ?? updated.subject} is now ${updated.role}.`);
    });

  members
    .command('remove')
    .description('remove a member from the tenant (the last admin cannot be removed)')
    .argument('<member>', "the member's user id, or their email")
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (ref: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const userId = await resolveMember(conn, opts.tenant, ref);
      await call(
        conn,
        'members remove',
        sdk.removeMember({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { user_id: userId }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
        { forbidden: null },
      );
      if (opts.format === 'json') return print(`${JSON.stringify({ user_id: userId, removed: true }, null, 2)}\n`);
      print(`${styles(cmd).out.green(`Member ${userId} removed.`)}\n`);
    });
}

function printMember(h: CommandHelpers, cmd: Command, format: Format, m: Member, headline: string): void {
  if (format === 'json') return h.print(`${JSON.stringify(m, null, 2)}\n`);
  const { out } = h.styles(cmd);
  h.print(`${out.green(headline)}\n`);
  h.print(memberPairs(m, out));
}

function memberPairs(m: Member, out: Style): string {
  return renderPairs(
    [
      ['user_id', m.user_id],
      ['role', m.role],
      ['email', m.email ?? '-'],
      ['display_name', m.display_name ?? '-'],
      ['subject', m.subject],
      ['issuer', m.issuer],
      ['created_at', m.created_at],
    ],
    out,
  );
}

function listAll(conn: Connection, tenant: string | undefined, limit: number): Promise<Member[]> {
  return allPages(async (cursor) => {
    const page = await call(
      conn,
      'members list',
      sdk.listMembers({
        client: conn.client,
        headers: tenantHeaders(tenant),
        query: { limit, ...(cursor ? { cursor } : {}) },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }),
      { forbidden: null },
    );
    return { items: page.members, next_cursor: page.next_cursor };
  });
}

/** A user id as given, or the id of the one member with this email (case-insensitive). */
async function resolveMember(conn: Connection, tenant: string | undefined, ref: string): Promise<string> {
  if (UUID.test(ref)) return ref.toLowerCase();
  if (!ref.includes('@')) throw new CliError(`'${ref}' is neither a user id (UUID) nor an email`);
  const wanted = ref.trim().toLowerCase();
  const matches = (await listAll(conn, tenant, 1000)).filter((m) => m.email?.toLowerCase() === wanted);
  if (matches.length === 0) throw new CliError(`no member with email '${ref}'`, EXIT_REFUSED);
  if (matches.length > 1) throw new CliError(`${matches.length} members have the email '${ref}' (different issuers): pass the user id`, EXIT_REFUSED);
  return matches[0]!.user_id;
}
