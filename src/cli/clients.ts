/**
 * `tenantctl clients list|create|get|update|delete`: the applications that sign people in
 * through the service's OpenID provider (docs/sign-in.md#clients), on the generated client
 * (platform admin). create, and update --rotate-secret, print the client's secret, which the
 * server never shows again.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { CreatedOidcClient, OidcClient } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_ERROR } from './errors';
import { renderPairs, renderTable, type Style } from './output';
import type { Prompt } from './tenant-admin';

const SECRET_WARNING = 'Store this secret now (e.g. in your secret manager): it is shown only once, and the application authenticates with it.';
const timeout = () => AbortSignal.timeout(REQUEST_TIMEOUT_MS);

function parseClientId(v: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(v)) throw new InvalidArgumentError('expected a client id (letters, digits, _ and -), as printed by clients create or list.');
  return v;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

function clientPairs(c: OidcClient, out: Style, secret?: string): string {
  return renderPairs(
    [
      ['client_id', c.client_id],
      ['name', c.name],
      ['type', c.type],
      ['redirect_uris', c.redirect_uris.join(' ')],
      ['post_logout', c.post_logout_redirect_uris.length ? c.post_logout_redirect_uris.join(' ') : '-'],
      ['built_in', String(c.built_in)],
      ['created_at', c.created_at],
      ['updated_at', c.updated_at],
      ...(secret !== undefined ? ([['client_secret', secret]] as Array<[string, string]>) : []),
    ],
    out,
  );
}

export function registerClientsCommands(program: Command, h: CommandHelpers, prompt: Prompt | undefined): void {
  const { globals, styles, formatOption, print } = h;
  const clients = program.command('clients').description('the applications that sign people in through the provider: list, create, get, update, delete (platform admin)');

  /** Prints a client; with a secret (created or rotated), the secret and the warning to store it. */
  const show = (cmd: Command, format: Format, c: CreatedOidcClient, headline: string) => {
    if (format === 'json') {
      if (c.client_secret !== undefined) h.progress(SECRET_WARNING);
      return print(`${JSON.stringify(c, null, 2)}\n`);
    }
    const { out } = styles(cmd);
    print(`${out.green(headline)}\n`);
    print(clientPairs(c, out, c.client_secret));
    if (c.client_secret !== undefined) print(`${out.bold(SECRET_WARNING)}\n`);
  };

  clients
    .command('list')
    .description('every client, oldest first (secrets are never shown again)')
    .addOption(formatOption())
    .action(async (opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const { clients: list } = await call(conn, 'clients list', sdk.listOidcClients({ client: conn.client, signal: timeout() }));
      if (opts.format === 'json') return print(`${JSON.stringify({ clients: list }, null, 2)}\n`);
      if (!list.length) return print('No clients.\n');
      print(
        renderTable(
          list,
          [
            { header: 'CLIENT ID', value: (c) => c.client_id },
            { header: 'NAME', value: (c) => c.name },
            { header: 'TYPE', value: (c) => c.type },
            { header: 'REDIRECT URIS', value: (c) => c.redirect_uris.join(' ') },
            { header: 'BUILT IN', value: (c) => (c.built_in ? 'yes' : '-') },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} client${list.length === 1 ? '' : 's'}\n`);
    });

  clients
    .command('create')
    .description("register an application; a confidential one's secret is printed once")
    .argument('<name>', 'what people and admins call it (1-200 characters)')
    .addOption(new Option('--type <type>', 'confidential (a server with a secret) or public (a browser or native app, PKCE only)').choices(['confidential', 'public']).makeOptionMandatory())
    .requiredOption('--redirect-uri <uri>', 'where the provider sends the code back, matched exactly; repeat for several', collect)
    .option('--post-logout-redirect-uri <uri>', 'where the provider may send people after logout; repeat for several', collect)
    .addOption(formatOption())
    .action(async (name: string, opts: { type: 'confidential' | 'public'; redirectUri: string[]; postLogoutRedirectUri?: string[]; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const made = await call(
        conn,
        'clients create',
        sdk.createOidcClient({
          client: conn.client,
          body: { name, type: opts.type, redirect_uris: opts.redirectUri, ...(opts.postLogoutRedirectUri ? { post_logout_redirect_uris: opts.postLogoutRedirectUri } : {}) },
          signal: timeout(),
        }),
      );
      show(cmd, opts.format, made, `Client ${made.client_id} registered.`);
    });

  clients
    .command('get')
    .description('one client (never its secret)')
    .argument('<client-id>', 'the client id', parseClientId)
    .addOption(formatOption())
    .action(async (id: string, opts: { format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const c = await call(conn, 'clients get', sdk.getOidcClient({ client: conn.client, path: { client_id: id }, signal: timeout() }));
      show(cmd, opts.format, c, `Client ${c.client_id}`);
    });

  clients
    .command('update')
    .description("change a client's name or redirect URIs (each list given replaces the old one), or rotate its secret")
    .argument('<client-id>', 'the client id', parseClientId)
    .option('--name <name>', 'a new name')
    .option('--redirect-uri <uri>', 'the new redirect URIs; repeat for several', collect)
    .option('--post-logout-redirect-uri <uri>', 'the new post-logout redirect URIs; repeat for several', collect)
    .option('--no-post-logout-redirect-uris', 'remove every post-logout redirect URI')
    .option('--rotate-secret', 'a new secret (printed once) replaces the old one at once (confidential clients)', false)
    .addOption(formatOption())
    .action(
      async (
        id: string,
        opts: { name?: string; redirectUri?: string[]; postLogoutRedirectUri?: string[]; postLogoutRedirectUris: boolean; rotateSecret: boolean; format: Format },
        cmd: Command,
      ) => {
        if (!opts.postLogoutRedirectUris && opts.postLogoutRedirectUri) throw new CliError('give --post-logout-redirect-uri or --no-post-logout-redirect-uris, not both', EXIT_ERROR);
        const body = {
          ...(opts.name !== undefined ? { name: opts.name } : {}),
          ...(opts.redirectUri ? { redirect_uris: opts.redirectUri } : {}),
          ...(opts.postLogoutRedirectUri ? { post_logout_redirect_uris: opts.postLogoutRedirectUri } : {}),
          ...(!opts.postLogoutRedirectUris ? { post_logout_redirect_uris: [] } : {}),
          ...(opts.rotateSecret ? { rotate_secret: true } : {}),
        };
        if (!Object.keys(body).length) throw new CliError('nothing to change: give --name, --redirect-uri, --post-logout-redirect-uri, --no-post-logout-redirect-uris or --rotate-secret', EXIT_ERROR);
        const conn = connect(globals(cmd));
        const c = await call(conn, 'clients update', sdk.updateOidcClient({ client: conn.client, path: { client_id: id }, body, signal: timeout() }));
        show(cmd, opts.format, c, opts.rotateSecret ? `Client ${c.client_id} updated; its old secret no longer works.` : `Client ${c.client_id} updated.`);
      },
    );

  clients
    .command('delete')
    .description('delete a client: its sign-ins and refresh tokens stop working at once; asks first unless --yes')
    .argument('<client-id>', 'the client id', parseClientId)
    .option('--yes', 'delete without asking (needed when there is no terminal)', false)
    .addOption(formatOption())
    .addHelpText('after', '\nWithout --yes and without a terminal to ask on, nothing is deleted and the exit status is 2.')
    .action(async (id: string, opts: { yes: boolean; format: Format }, cmd: Command) => {
      // Refuse before any request: a script that forgot --yes must not half-run.
      if (!opts.yes && !prompt) throw new CliError(`refusing to delete client '${id}' without confirmation: there is no terminal to ask on; pass --yes to delete it`, EXIT_ERROR);
      const conn = connect(globals(cmd));
      if (!opts.yes) {
        const c = await call(conn, 'clients delete', sdk.getOidcClient({ client: conn.client, path: { client_id: id }, signal: timeout() }));
        h.progress(`Deleting client '${c.name}' (${id}) ends its sign-ins and refresh tokens at once; its access tokens live until they expire.`);
        const typed = (await prompt!(`Type the client id (${id}) to delete it, anything else to cancel: `)).trim();
        if (typed !== id) throw new CliError(typed ? `not deleted: '${typed}' is not the client id '${id}'` : 'not deleted: cancelled', EXIT_ERROR);
      }
      await call(conn, 'clients delete', sdk.deleteOidcClient({ client: conn.client, path: { client_id: id }, signal: timeout() }));
      if (opts.format === 'json') return print(`${JSON.stringify({ client_id: id, deleted: true }, null, 2)}\n`);
      print(`${styles(cmd).out.green(`Client ${id} deleted.`)}\n`);
    });
}
