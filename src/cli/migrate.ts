/**
 * `tenantctl migrate status`: the migrations a database has and the ones this version would run
 * on start, read straight from PostgreSQL (the one tenantctl command that does not go through
 * the API: it is meant for before an upgrade, when no instance of the new version runs yet).
 */
import { Option, type Command } from 'commander';
import { redactUrl } from '../config';
import type { MigrationStatus } from '../db/migration-status';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_ERROR, EXIT_REFUSED } from './errors';
import { renderTable } from './output';

interface StatusOptions {
  format: Format;
  databaseUrl?: string;
  migrationDatabaseUrl?: string;
}

/** Registers the `migrate` command group on `program`. */
export function registerMigrateCommands(program: Command, h: CommandHelpers): void {
  const { styles, formatOption, print, setExitCode } = h;
  const migrate = program.command('migrate').description('database migrations (read from PostgreSQL directly, not through the API)');
  migrate
    .command('status')
    .description('list the applied and pending migrations of the database; exit 0 when up to date, 1 when a start of this version would migrate or fail')
    .addOption(new Option('--database-url <url>', 'the database the service uses').env('SERVICE_DATABASE_URL'))
    .addOption(new Option('--migration-database-url <url>', 'a direct connection for migrations, when the service goes through a pooler (preferred when set)').env('SERVICE_MIGRATION_DATABASE_URL'))
    .addOption(formatOption())
    .action(async (opts: StatusOptions, cmd: Command) => {
      // Same choice as the service: migrations use the direct URL when there is one.
      const url = opts.migrationDatabaseUrl ?? opts.databaseUrl;
      if (!url) {
        throw new CliError('SERVICE_DATABASE_URL is not set: give --database-url (the embedded database of `npm start` migrates itself on start and has no status to read)', EXIT_ERROR);
      }
      let status: MigrationStatus;
      try {
        // Loaded here: the database modules (knex, every migration) would slow every other command.
        const { readMigrationStatus } = await import('../db/migration-status.js');
        status = await readMigrationStatus(url);
      } catch (err) {
        throw new CliError(`cannot read the migrations of ${redactUrl(url)}: ${((err as Error)?.message ?? String(err)).split('\n')[0]}`, EXIT_ERROR);
      }
      const upToDate = status.pending.length === 0 && status.unknown.length === 0 && status.roles_problem === null;
      setExitCode(upToDate ? 0 : EXIT_REFUSED);
      if (opts.format === 'json') return print(`${JSON.stringify({ up_to_date: upToDate, ...status }, null, 2)}\n`);
      const { out } = styles(cmd);
      const rows = [
        ...status.applied.map((m) => ({ name: m.name, state: 'applied', at: m.migrated_at })),
        ...status.pending.map((name) => ({ name, state: 'pending', at: '-' })),
        ...status.unknown.map((m) => ({ name: m.name, state: 'unknown', at: m.migrated_at })),
      ];
      print(
        renderTable(
          rows,
          [
            { header: 'MIGRATION', value: (r) => r.name },
            { header: 'STATE', value: (r) => r.state },
            { header: 'APPLIED AT', value: (r) => r.at },
          ],
          out,
        ),
      );
      if (status.unknown.length) {
        print(`${out.red(`${status.unknown.length} migration(s) unknown to this version`)}: the database was migrated by a newer tenant-service, which this version refuses to start on.\n`);
      }
      if (status.pending.length) print(`${status.pending.length} pending: the next start of this version runs ${status.pending.length > 1 ? 'them' : 'it'} (docs/operations.md, "Upgrades").\n`);
      if (status.roles_problem) print(`${out.red('roles:')} ${status.roles_problem}\n`);
      if (upToDate) print(`${out.green('Up to date')}: ${status.applied.length} migrations applied, none pending.\n`);
    });
}
