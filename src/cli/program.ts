/**
 * tenantctl (commander 14) on the generated client: the global options, then one file per command
 * group (tenant.ts, events.ts, token.ts). `runCli` never exits the process: it returns the exit
 * status, so main.ts owns process state and tests could drive it in-process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { Command, CommanderError, Option } from 'commander';
import { defaultServiceUrl, type GlobalOptions } from './api';
import type { CommandHelpers } from './command';
import { EXIT_ERROR, reportFailure } from './errors';
import { registerEventsCommand } from './events';
import { registerKeysCommands } from './keys';
import { registerMigrateCommands } from './migrate';
import { styleFor, type Out } from './output';
import { registerTenantCommands } from './tenant';
import { registerTenantAdminCommands, type Prompt } from './tenant-admin';
import { registerTenantLifecycleCommands, type StandardStreams } from './tenant-lifecycle';
import { registerMembersCommands } from './members';
import { registerInvitationsCommands } from './invitations';
import { registerWebhooksCommands } from './webhooks';
import { registerPermissionsCommands, registerRolesCommands } from './roles';
import { registerDbCommands } from './db';
import { registerTokenCommand } from './token';
import { registerConsoleCommand } from './console';
import { registerScimCommands } from './scim';
import { registerDomainsCommands } from './domains';
import { registerClientsCommands } from './clients';
import { registerSsoCommands } from './sso';

export interface CliIO {
  readonly stdout: Out;
  readonly stderr: Out;
  /** NO_COLOR is set in the environment. */
  readonly noColor: boolean;
  /** Asks a question on the terminal; absent when stdin or stderr is not a terminal. */
  readonly prompt?: Prompt;
  /** stdin and stdout as streams, for `tenant export` and `tenant import` (absent: those need a file). */
  readonly streams?: StandardStreams;
}

/** Runs tenantctl with `argv` (as process.argv: node, script, args…) and returns the exit status. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  let exitCode = 0;
  const program = new Command();
  // Set before any .command() so every subcommand inherits them.
  program.exitOverride();
  program.configureOutput({
    writeOut: (s) => io.stdout.write(s),
    writeErr: (s) => io.stderr.write(s),
  });
  program.showHelpAfterError('(add --help for usage)');

  program
    .name('tenantctl')
    .description('Command-line tool for tenant-service: manage and audit tenants, their members, invitations and webhooks; read the audit log; mint local tokens and console sign-in links.')
    .version(packageVersion(), '-V, --version')
    .addOption(
      new Option('--url <url>', 'base URL of the service (default: from SERVICE_HOST and SERVICE_PORT, as the service listens)')
        .env('SERVICE_URL')
        .default(defaultServiceUrl(process.env), defaultServiceUrl(process.env)),
    )
    .addOption(new Option('--token <jwt>', 'bearer token of a platform admin (default: minted from the local signing key)').env('SERVICE_TOKEN'))
    .addOption(new Option('--data-dir <dir>', 'the service data directory holding the local signing key').env('SERVICE_DATA_DIR').default('./.data'))
    .addOption(new Option('--admin-role <role>', 'platform admin role put in minted tokens').env('SERVICE_ADMIN_ROLE').default('admin').hideHelp())
    .addOption(new Option('--admin-role-claim <claim>', 'claim carrying roles in minted tokens').env('SERVICE_ADMIN_ROLE_CLAIM').default('roles').hideHelp())
    .addOption(new Option('--audience <aud>', 'audience put in minted tokens').env('SERVICE_JWT_AUDIENCE').hideHelp())
    .option('--no-color', 'never colour the output (also when NO_COLOR is set or output is not a terminal)')
    .addHelpText(
      'after',
      `
Exit status: 0 success; 1 the server refused the request (tenant audit: violations found);
2 bad flags, unreachable server or other errors (tenant audit: any error).

Examples:
  tenantctl tenant create --name "Acme Corporation" --slug acme-corp --sample-data
  tenantctl tenant list --query acme --format json
  tenantctl tenant update acme-corp --provision-from-claims false
  tenantctl tenant update acme-corp --provision-from-claims true --claims-issuer https://idp.acme.com
  tenantctl tenant audit --tenant acme-corp
  tenantctl tenant update acme-corp --name "Acme Inc" --status active
  tenantctl tenant delete acme-corp --yes
  tenantctl tenant suspend acme-corp --reason "Invoice 2026-10 unpaid"
  tenantctl tenant schedule-deletion acme-corp --grace-days 30
  tenantctl tenant export acme-corp --output acme-corp.ndjson
  tenantctl --url https://new.example.com tenant import acme-corp.ndjson
  tenantctl members set-role bob@acme.com --role admin --tenant acme-corp
  tenantctl invitations create --email carol@acme.com --role member --tenant acme-corp
  tenantctl webhooks create https://hooks.acme.com/tenants --events 'tenant.*,member.*'
  tenantctl scim tokens create --description "Entra ID" --tenant acme-corp
  tenantctl scim settings set --group-role Engineering=admin --group-role Staff=member --tenant acme-corp
  tenantctl domains add acme.com --tenant acme-corp
  tenantctl domains set acme.com --join automatic --role member --tenant acme-corp
  tenantctl sso connections create-saml --name ADFS --metadata-file FederationMetadata.xml --tenant acme-corp
  tenantctl events list --tenant acme-corp --since 24h
  tenantctl keys rotate
  tenantctl migrate status
  pg_dump --format=custom --file=backup.dump "$(tenantctl db url)"
  SERVICE_TOKEN=<member's token> tenantctl tenant token --tenant acme-corp
  tenantctl token --sub alice --email alice@acme.com --admin
  tenantctl console --sub alice --email alice@acme.com --admin`,
    );

  const globals = (cmd: Command): GlobalOptions & { color: boolean } => cmd.optsWithGlobals() as GlobalOptions & { color: boolean };
  const styles = (cmd: Command) => {
    const noColor = io.noColor || !globals(cmd).color;
    return { out: styleFor(io.stdout, noColor), err: styleFor(io.stderr, noColor) };
  };
  const formatOption = () => new Option('--format <format>', 'output format').choices(['table', 'json']).default('table');
  const print = (s: string) => io.stdout.write(s);
  const progress = (s: string) => {
    if (io.stderr.isTTY) io.stderr.write(`${s}\n`);
  };

  const helpers: CommandHelpers = { globals, styles, formatOption, print, progress, setExitCode: (code) => (exitCode = code) };
  registerTenantCommands(program, helpers);
  registerEventsCommand(program, { globals, style: (cmd) => styles(cmd).out, print });
  registerTokenCommand(program, helpers);
  registerConsoleCommand(program, helpers, (s) => io.stderr.write(s));
  registerTenantAdminCommands(program, helpers, io.prompt);
  registerTenantLifecycleCommands(program, helpers, io.streams ?? { stdin: Readable.from([]), stdout: new Writable({ write: (_c, _e, cb) => cb(new Error('no stdout stream: pass --output')) }) });
  registerMembersCommands(program, helpers);
  registerInvitationsCommands(program, helpers);
  registerWebhooksCommands(program, helpers);
  registerPermissionsCommands(program, helpers, io.prompt);
  registerRolesCommands(program, helpers);
  registerScimCommands(program, helpers);
  registerDomainsCommands(program, helpers);
  registerClientsCommands(program, helpers, io.prompt);
  registerSsoCommands(program, helpers);
  registerKeysCommands(program, helpers);
  registerMigrateCommands(program, helpers);
  registerDbCommands(program, helpers);

  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; every usage error (commander already printed it) exits 2.
      return err.exitCode === 0 ? 0 : EXIT_ERROR;
    }
    return reportFailure(err, io.stderr, io.noColor || argv.includes('--no-color'));
  }
}

/** The package version, from the nearest package.json (src/ under ts, dist/src/ when built). */
function packageVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'tenant-service' && pkg.version) return pkg.version;
    }
  }
  return 'unknown';
}
