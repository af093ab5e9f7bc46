/**
 * `tenantctl invitations list|create|resend|revoke`: invitations to one tenant (`--tenant`, sent
 * as X-Tenant) on the generated client (tenant admin). create and resend print the one-time
 * token and accept URL: the server never shows them again.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Invitation, InvitationStatus, InvitationWithToken, MemberRole } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { renderPairs, renderTable, type Style } from './output';
import { allPages, parsePageSize, roleOption, tenantHeaders, tenantOption, UUID } from './tenant-scope';

function parseInvitationId(v: string): string {
  if (!UUID.test(v)) throw new InvalidArgumentError('expected an invitation id (UUID), as printed by invitations create or list.');
  return v.toLowerCase();
}

export function registerInvitationsCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const invitations = program.command('invitations').description('invite people to a tenant by email, and list, resend or revoke invitations (tenant admin)');

  invitations
    .command('list')
    .description("list the tenant's invitations, newest first, following the pages to the end")
    .addOption(new Option('--status <status>', 'only invitations with this status').choices(['pending', 'accepted', 'revoked', 'expired']))
    .option('--limit <n>', 'page size per request (1-1000)', parsePageSize, 100)
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { status?: InvitationStatus; limit: number; tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const list = await allPages(async (cursor) => {
        const page = await call(
          conn,
          'invitations list',
          sdk.listInvitations({
            client: conn.client,
            headers: tenantHeaders(opts.tenant),
            query: { limit: opts.limit, ...(opts.status ? { status: opts.status } : {}), ...(cursor ? { cursor } : {}) },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          }),
          { forbidden: null },
        );
        return { items: page.invitations, next_cursor: page.next_cursor };
      });
      if (opts.format === 'json') return print(`${JSON.stringify({ invitations: list, total_count: list.length }, null, 2)}\n`);
      if (!list.length) return print('No invitations.\n');
      print(
        renderTable(
          list,
          [
            { header: 'INVITATION ID', value: (i) => i.invitation_id },
            { header: 'EMAIL', value: (i) => i.email },
            { header: 'ROLE', value: (i) => i.role },
            { header: 'STATUS', value: (i) => i.status },
            { header: 'DELIVERY', value: (i) => i.delivery },
            { header: 'EXPIRES', value: (i) => i.expires_at },
            { header: 'INVITED BY', value: (i) => i.invited_by.email ?? '-' },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} invitation${list.length === 1 ? '' : 's'}\n`);
    });

  invitations
    .command('create')
    .description('invite someone by email; prints the one-time token and accept URL')
    .requiredOption('--email <email>', "the invitee's email")
    .addOption(roleOption('the role they get on accepting', false).default('member'))
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { email: string; role: MemberRole; tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const created = await call(
        conn,
        'invitations create',
        sdk.createInvitation({
          client: conn.client,
          headers: tenantHeaders(opts.tenant),
          body: { email: opts.email, role: opts.role },
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }),
        { forbidden: null },
      );
      printWithToken(h, cmd, opts.format, created, `Invited ${created.email} as ${created.role}.`);
    });

  invitations
    .command('resend')
    .description('send a pending or expired invitation again with a new token (the old one stops working)')
    .argument('<invitation-id>', 'the invitation id', parseInvitationId)
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (id: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const resent = await call(
        conn,
        'invitations resend',
        sdk.resendInvitation({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { invitation_id: id }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
        { forbidden: null },
      );
      printWithToken(h, cmd, opts.format, resent, `Invitation to ${resent.email} sent again.`);
    });

  invitations
    .command('revoke')
    .description('revoke an invitation: its token stops working')
    .argument('<invitation-id>', 'the invitation id', parseInvitationId)
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (id: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const revoked = await call(
        conn,
        'invitations revoke',
        sdk.revokeInvitation({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { invitation_id: id }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
        { forbidden: null },
      );
      if (opts.format === 'json') return print(`${JSON.stringify(revoked, null, 2)}\n`);
      const { out } = styles(cmd);
      print(`${out.green(`Invitation to ${revoked.email} revoked.`)}\n`);
      print(invitationPairs(revoked, out));
    });
}

function printWithToken(h: CommandHelpers, cmd: Command, format: Format, inv: InvitationWithToken, headline: string): void {
  if (format === 'json') return h.print(`${JSON.stringify(inv, null, 2)}\n`);
  const { out } = h.styles(cmd);
  h.print(`${out.green(headline)}\n`);
  h.print(
    invitationPairs(inv, out, [
      ['token', inv.token],
      ['accept_url', inv.accept_url ?? '(no SERVICE_FRONTEND_BASE_URL: give the invitee the token)'],
    ]),
  );
  h.print('The token is shown only now; the invitee accepts with it (POST /api/invitations/accept).\n');
}

function invitationPairs(i: Invitation, out: Style, extra: Array<[string, string]> = []): string {
  return renderPairs(
    [
      ['invitation_id', i.invitation_id],
      ['email', i.email],
      ['role', i.role],
      ['status', i.status],
      ['delivery', i.delivery],
      ['expires_at', i.expires_at],
      ...extra,
    ],
    out,
  );
}
