/**
 * `tenantctl db url`: the connection URL of the embedded PostgreSQL (the database the service
 * starts when SERVICE_DATABASE_URL is unset), read from the data dir, so it is backed up like any
 * other: `pg_dump "$(tenantctl db url)"` with a pg_dump of its major version
 * (docs/operations.md "The embedded database"). Nothing is asked of the service.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { readEmbeddedAddress } from '../embedded-postgres/url';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_ERROR } from './errors';

export function registerDbCommands(program: Command, h: CommandHelpers): void {
  const { globals, formatOption, print } = h;
  const db = program.command('db').description('the embedded PostgreSQL (started when SERVICE_DATABASE_URL is unset)');
  db.command('url')
    .description('print the connection URL of the running embedded PostgreSQL, read from the data dir (SERVICE_DATA_DIR / --data-dir); it holds the password')
    .addOption(formatOption())
    .addHelpText('after', '\nBack it up like any PostgreSQL 17 database:  pg_dump --format=custom --file=backup.dump "$(tenantctl db url)"')
    .action(async (opts: { format: Format }, cmd: Command) => {
      const dataDir = path.resolve(globals(cmd).dataDir);
      let address;
      try {
        address = await readEmbeddedAddress(dataDir);
      } catch (err) {
        throw new CliError((err as Error).message, EXIT_ERROR);
      }
      if (opts.format === 'json') return print(`${JSON.stringify({ url: address.url, port: address.port, data_dir: dataDir }, null, 2)}\n`);
      print(`${address.url}\n`);
    });
}
