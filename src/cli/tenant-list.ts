/**
 * `tenantctl tenant list`: every tenant, page after page (GET /api/setup/tenants).
 */
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { Tenant } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS, type Connection } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError } from './errors';
import { renderTable } from './output';
import { parseLimit, parseQuery } from './tenant-flags';

/** Registers `list` on the `tenant` command group. */
export function registerTenantListCommand(tenant: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print, progress } = h;
  tenant
    .command('list')
    .description('list every tenant, following the pages to the end')
    .option('--query <q>', 'case-insensitive match on name or slug', parseQuery)
    .option('--limit <n>', 'page size per request (1-1000)', parseLimit, 100)
    .addOption(formatOption())
    .action(async (opts: { query?: string; limit: number; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const tenants = await listAll(conn, opts.query, opts.limit, progress);
      if (opts.format === 'json') return print(`${JSON.stringify({ tenants, total_count: tenants.length }, null, 2)}\n`);
      const { out } = styles(cmd);
      if (!tenants.length) return print(opts.query ? `No tenants match '${opts.query}'.\n` : 'No tenants.\n');
      print(
        renderTable(
          tenants,
          [
            { header: 'SLUG', value: (t) => t.slug },
            { header: 'NAME', value: (t) => t.name },
            { header: 'STATUS', value: (t) => t.status },
            { header: 'CREATED', value: (t) => t.created_at },
            { header: 'TENANT ID', value: (t) => t.tenant_id },
          ],
          out,
        ),
      );
      print(`${tenants.length} tenant${tenants.length === 1 ? '' : 's'}\n`);
    });
}

/** Every tenant matching `q`, page after page until `next_cursor` is null. */
async function listAll(conn: Connection, q: string | undefined, limit: number, progress: (s: string) => void): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const page = await call(
      conn,
      'tenant list',
      sdk.listTenants({ client: conn.client, query: { limit, ...(cursor ? { cursor } : {}), ...(q ? { q } : {}) }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    );
    tenants.push(...page.tenants);
    if (page.next_cursor === null || page.tenants.length === 0) return tenants;
    progress(`fetched ${tenants.length} of ${page.total_count} tenants…`);
    // A cursor seen twice would loop forever: stop with an error rather than hang.
    if (seen.has(page.next_cursor)) throw new CliError(`the server returned the same next_cursor twice after ${tenants.length} tenants`);
    seen.add(page.next_cursor);
    cursor = page.next_cursor;
  }
}
