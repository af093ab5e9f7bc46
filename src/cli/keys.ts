/**
 * `tenantctl keys rotate`: rotates the tenant-token signing key (platform admin). The next key is
 * published at once and signs from `signs_from`; the previous one stays published until its
 * last token has expired.
 */
import type { Command } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { renderPairs } from './output';

/** Registers the `keys` command group on `program`. */
export function registerKeysCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const keys = program.command('keys').description('tenant-token signing keys (platform admin)');
  keys
    .command('rotate')
    .description('publish the next tenant-token signing key now; it signs from signs_from, and the previous key is dropped once its tokens have expired')
    .addOption(formatOption())
    .action(async (opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const r = await call(conn, 'keys rotate', sdk.rotateTenantTokenKeys({ client: conn.client, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
      if (opts.format === 'json') return print(`${JSON.stringify(r, null, 2)}\n`);
      const { out } = styles(cmd);
      print(`${out.green('Tenant-token key rotated.')}\n`);
      print(
        renderPairs(
          [
            ['kid', r.kid],
            ['signs_from', r.signs_from],
            ['previous_kid', r.previous_kid ?? '-'],
            ['previous_published_until', r.previous_published_until ?? '-'],
          ],
          out,
        ),
      );
    });
}
