/**
 * `tenantctl tenant get|delete`: one tenant on the generated client (platform admin). A delete
 * always shows the deletion preview first (GET …/deletion-preview, a read that spends no delete
 * quota) and, unless --yes, asks for the tenant's slug to be typed on a terminal.
 */
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { TenantDeletionPreview } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_ERROR } from './errors';
import { renderPairs, renderTable, type Style } from './output';
import { resolveTenantId, tenantPairs } from './tenant-lookup';

/** Asks one question on the terminal and resolves to the line typed; absent without a terminal. */
export type Prompt = (question: string) => Promise<string>;

/** Adds `get` and `delete` to the `tenant` group registered by tenant.ts. */
export function registerTenantAdminCommands(program: Command, h: CommandHelpers, prompt: Prompt | undefined): void {
  const { globals, styles, formatOption, print } = h;
  const tenant = program.commands.find((c) => c.name() === 'tenant');
  if (!tenant) throw new Error('the tenant command group must be registered first');

  tenant
    .command('get')
    .description('show one tenant')
    .argument('<tenant>', 'slug or tenant id')
    .addOption(formatOption())
    .action(async (ref: string, opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const tenantId = await resolveTenantId(conn, ref);
      const found = await call(conn, 'tenant get', sdk.getTenant({ client: conn.client, path: { tenant_id: tenantId }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
      if (opts.format === 'json') return print(`${JSON.stringify(found, null, 2)}\n`);
      print(renderPairs(tenantPairs(found), styles(cmd).out));
    });

  tenant
    .command('delete')
    .description('delete a tenant and all its data, after showing what would be deleted; asks for the slug unless --yes')
    .argument('<tenant>', 'slug or tenant id')
    .option('--yes', 'delete without asking (needed when there is no terminal)', false)
    .addOption(formatOption())
    .addHelpText('after', '\nWithout --yes and without a terminal to ask on, nothing is deleted and the exit status is 2.')
    .action(async (ref: string, opts: { yes: boolean; format: Format }, cmd: Command) => {
      // Refuse before any request: a script that forgot --yes must not half-run.
      if (!opts.yes && !prompt) {
        throw new CliError(`refusing to delete tenant '${ref}' without confirmation: there is no terminal to ask on; pass --yes to delete it`, EXIT_ERROR);
      }
      const conn = connect(globals(cmd));
      const { out, err } = styles(cmd);
      const tenantId = await resolveTenantId(conn, ref);
      const found = await call(conn, 'tenant delete', sdk.getTenant({ client: conn.client, path: { tenant_id: tenantId }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
      const preview = await call(
        conn,
        'tenant delete',
        sdk.getTenantDeletionPreview({ client: conn.client, path: { tenant_id: tenantId }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
      );
      const previewText = `Deleting tenant '${found.name}' (${found.slug}, ${found.tenant_id}) removes:\n${renderPreview(preview, opts.format === 'json' ? err : out)}`;
      // JSON keeps stdout one document: the person at the terminal reads the preview on stderr.
      if (opts.format === 'table') print(previewText);
      if (!opts.yes) {
        if (opts.format === 'json') h.progress(previewText.trimEnd());
        const typed = (await prompt!(`Type the tenant's slug (${found.slug}) to delete it, anything else to cancel: `)).trim();
        if (typed !== found.slug) {
          throw new CliError(typed ? `not deleted: '${typed}' is not the slug '${found.slug}'` : 'not deleted: cancelled', EXIT_ERROR);
        }
      }
      const deleted = await call(conn, 'tenant delete', sdk.deleteTenant({ client: conn.client, path: { tenant_id: tenantId }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
      if (opts.format === 'json') return print(`${JSON.stringify({ preview, deleted }, null, 2)}\n`);
      print(`${out.green(deleted.message)}\n`);
      if ('warning' in deleted) print(`${deleted.warning}\n`);
    });
}

function renderPreview(preview: TenantDeletionPreview, style: Style): string {
  const rows = Object.entries(preview.rows).sort(([a], [b]) => a.localeCompare(b));
  const total = rows.reduce((n, [, c]) => n + c, 0);
  return (
    renderTable(
      rows,
      [
        { header: 'TABLE', value: ([t]) => t },
        { header: 'ROWS', value: ([, c]) => String(c), right: true },
      ],
      style,
    ) + `${total} row${total === 1 ? '' : 's'} in ${rows.length} table${rows.length === 1 ? '' : 's'}\n`
  );
}
