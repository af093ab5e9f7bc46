/**
 * `tenantctl sso connections list|create-oidc|create-saml|get|update|delete` and
 * `tenantctl sso show|set --required=true|false`: a tenant's own single sign-on (docs/sso.md) on
 * the generated client, for its admins (`--tenant`, sent as X-Tenant). Secrets and certificates
 * are read from files (`-` for stdin), never from the command line, where `ps` would show them.
 */
import fs from 'node:fs';
import { type Command, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { SsoConnection, SsoSettings } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError } from './errors';
import { renderPairs, renderTable, type Style } from './output';
import { tenantHeaders, tenantOption } from './tenant-scope';

// Creating an OIDC connection discovers its issuer (5 s at most on the server).
const timeout = () => AbortSignal.timeout(REQUEST_TIMEOUT_MS + 5_000);

function readFile(path: string, what: string): string {
  try {
    return fs.readFileSync(path === '-' ? 0 : path, 'utf8').trim();
  } catch (err) {
    throw new CliError(`Cannot read ${what} from '${path}': ${(err as Error).message}`, 2);
  }
}

function pairs(c: SsoConnection, out: Style): string {
  const rows: Array<[string, string]> = [
    ['connection_id', c.connection_id],
    ['type', c.type],
    ['name', c.name],
    ['status', c.status],
  ];
  if (c.type === 'oidc') rows.push(['redirect_uri', c.redirect_uri ?? '-'], ['issuer', c.issuer ?? '-'], ['client_id', c.client_id ?? '-'], ['scopes', (c.scopes ?? []).join(' ')]);
  else
    rows.push(
      ['sp_entity_id', c.sp_entity_id ?? '-'],
      ['acs_url', c.acs_url ?? '-'],
      ['sp_metadata_url', c.sp_metadata_url ?? '-'],
      ['idp_entity_id', c.idp_entity_id ?? '-'],
      ['idp_sso_url', c.idp_sso_url ?? '-'],
      ['idp_certificate', c.idp_certificate ? `${c.idp_certificate.subject}, SHA-256 ${c.idp_certificate.fingerprint_sha256}, until ${c.idp_certificate.not_after}` : '-'],
    );
  return renderPairs(rows, out);
}

export function registerSsoCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print } = h;
  const sso = program.command('sso').description("a tenant's own single sign-on: its OIDC / SAML connections and whether members must use them (tenant admin)");
  const connections = sso.command('connections').description("the tenant's identity providers (at most 5)");
  const show = (cmd: Command, format: Format, c: SsoConnection, headline: string) => {
    if (format === 'json') return print(`${JSON.stringify(c, null, 2)}\n`);
    const { out } = styles(cmd);
    print(`${out.green(headline)}\n`);
    print(pairs(c, out));
  };
  const showSettings = (cmd: Command, format: Format, s: SsoSettings) => {
    if (format === 'json') return print(`${JSON.stringify(s, null, 2)}\n`);
    print(renderPairs([['sso_required', String(s.sso_required)], ['connection_id', s.connection_id ?? '- (no active connection)']], styles(cmd).out));
  };

  connections
    .command('list')
    .description("list the tenant's connections")
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const { connections: list } = await call(conn, 'sso connections list', sdk.listSsoConnections({ client: conn.client, headers: tenantHeaders(opts.tenant), signal: timeout() }), { forbidden: null });
      if (opts.format === 'json') return print(`${JSON.stringify({ connections: list }, null, 2)}\n`);
      if (!list.length) return print('No SSO connections: add one with tenantctl sso connections create-oidc or create-saml.\n');
      print(
        renderTable<SsoConnection>(
          list,
          [
            { header: 'CONNECTION', value: (c) => c.connection_id },
            { header: 'TYPE', value: (c) => c.type },
            { header: 'NAME', value: (c) => c.name },
            { header: 'STATUS', value: (c) => c.status },
            { header: 'IDP', value: (c) => c.issuer ?? c.idp_entity_id ?? '-' },
          ],
          styles(cmd).out,
        ),
      );
      print(`${list.length} connection${list.length === 1 ? '' : 's'}\n`);
    });

  connections
    .command('create-oidc')
    .description('connect an OpenID Connect provider (its issuer is discovered now); prints the redirect URI to register there')
    .requiredOption('--name <name>', 'a name for people to read, e.g. "Okta"')
    .requiredOption('--issuer <url>', 'the issuer URL, e.g. https://acme.okta.com')
    .requiredOption('--client-id <id>', 'the client id the provider gave this service')
    .requiredOption('--client-secret-file <path>', "a file holding the client secret ('-': stdin)")
    .option('--scopes <list>', 'comma list of scopes (default: openid,email,profile)')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { name: string; issuer: string; clientId: string; clientSecretFile: string; scopes?: string; tenant?: string; format: Format }, cmd: Command) => {
      const body = {
        type: 'oidc' as const,
        name: opts.name,
        issuer: opts.issuer,
        client_id: opts.clientId,
        client_secret: readFile(opts.clientSecretFile, 'the client secret'),
        ...(opts.scopes ? { scopes: opts.scopes.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
      };
      const conn = connect(globals(cmd));
      const c = await call(conn, 'sso connections create-oidc', sdk.createSsoConnection({ client: conn.client, headers: tenantHeaders(opts.tenant), body, signal: timeout() }), { forbidden: null });
      show(cmd, opts.format, c, `OIDC connection ${c.name} created. Register this redirect URI at the provider: ${c.redirect_uri}`);
    });

  connections
    .command('create-saml')
    .description("connect a SAML 2.0 identity provider from its metadata (or its entity id, sign-in URL and certificate); prints the values to register there")
    .requiredOption('--name <name>', 'a name for people to read, e.g. "ADFS"')
    .option('--metadata-file <path>', "the IdP's metadata XML ('-': stdin)")
    .option('--entity-id <id>', "the IdP's entity id (without --metadata-file)")
    .option('--sso-url <url>', "the IdP's HTTP-Redirect sign-in URL (without --metadata-file)")
    .option('--certificate-file <path>', "the IdP's signing certificate, PEM (without --metadata-file)")
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { name: string; metadataFile?: string; entityId?: string; ssoUrl?: string; certificateFile?: string; tenant?: string; format: Format }, cmd: Command) => {
      const fields = opts.entityId !== undefined || opts.ssoUrl !== undefined || opts.certificateFile !== undefined;
      if ((opts.metadataFile === undefined) === !fields || (fields && (!opts.entityId || !opts.ssoUrl || !opts.certificateFile))) {
        throw new CliError('sso connections create-saml: pass --metadata-file, or all of --entity-id, --sso-url and --certificate-file.', 2);
      }
      const body = opts.metadataFile
        ? { type: 'saml' as const, name: opts.name, idp_metadata_xml: readFile(opts.metadataFile, 'the metadata') }
        : { type: 'saml' as const, name: opts.name, idp_entity_id: opts.entityId!, idp_sso_url: opts.ssoUrl!, idp_certificate: readFile(opts.certificateFile!, 'the certificate') };
      const conn = connect(globals(cmd));
      const c = await call(conn, 'sso connections create-saml', sdk.createSsoConnection({ client: conn.client, headers: tenantHeaders(opts.tenant), body, signal: timeout() }), { forbidden: null });
      show(cmd, opts.format, c, `SAML connection ${c.name} created. Register at the IdP: entity id ${c.sp_entity_id}, ACS URL ${c.acs_url} (or its metadata: ${c.sp_metadata_url})`);
    });

  connections
    .command('get')
    .description('show one connection')
    .argument('<connection_id>', 'the connection id')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (id: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const c = await call(conn, 'sso connections get', sdk.getSsoConnection({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { connection_id: id }, signal: timeout() }), { forbidden: null });
      show(cmd, opts.format, c, `Connection ${c.name}`);
    });

  connections
    .command('update')
    .description('rename, activate / deactivate, or change a secret, scopes, sign-in URL or certificate')
    .argument('<connection_id>', 'the connection id')
    .option('--name <name>', 'a new name')
    .addOption(new Option('--status <status>', 'active or inactive').choices(['active', 'inactive']))
    .option('--client-secret-file <path>', "OIDC: a file holding the new client secret ('-': stdin)")
    .option('--scopes <list>', 'OIDC: comma list of scopes')
    .option('--sso-url <url>', "SAML: the IdP's sign-in URL")
    .option('--certificate-file <path>', "SAML: the IdP's new signing certificate, PEM")
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (id: string, opts: { name?: string; status?: 'active' | 'inactive'; clientSecretFile?: string; scopes?: string; ssoUrl?: string; certificateFile?: string; tenant?: string; format: Format }, cmd: Command) => {
      const body = {
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(opts.status !== undefined ? { status: opts.status } : {}),
        ...(opts.clientSecretFile !== undefined ? { client_secret: readFile(opts.clientSecretFile, 'the client secret') } : {}),
        ...(opts.scopes !== undefined ? { scopes: opts.scopes.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
        ...(opts.ssoUrl !== undefined ? { idp_sso_url: opts.ssoUrl } : {}),
        ...(opts.certificateFile !== undefined ? { idp_certificate: readFile(opts.certificateFile, 'the certificate') } : {}),
      };
      if (Object.keys(body).length === 0) throw new CliError('sso connections update: pass at least one of --name, --status, --client-secret-file, --scopes, --sso-url, --certificate-file.', 2);
      const conn = connect(globals(cmd));
      const c = await call(conn, 'sso connections update', sdk.updateSsoConnection({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { connection_id: id }, body, signal: timeout() }), { forbidden: null });
      show(cmd, opts.format, c, `Connection ${c.name} updated (${c.status}).`);
    });

  connections
    .command('delete')
    .description('delete a connection (its sign-ins in flight fail)')
    .argument('<connection_id>', 'the connection id')
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (id: string, opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      await call(conn, 'sso connections delete', sdk.deleteSsoConnection({ client: conn.client, headers: tenantHeaders(opts.tenant), path: { connection_id: id }, signal: timeout() }), { forbidden: null });
      if (opts.format === 'json') return print(`${JSON.stringify({ connection_id: id, deleted: true }, null, 2)}\n`);
      print(`${styles(cmd).out.green(`Connection ${id} deleted.`)}\n`);
    });

  sso
    .command('show')
    .description("the tenant's sso_required and the connection people are sent to")
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      showSettings(cmd, opts.format, await call(conn, 'sso show', sdk.getSsoSettings({ client: conn.client, headers: tenantHeaders(opts.tenant), signal: timeout() }), { forbidden: null }));
    });

  sso
    .command('set')
    .description('require SSO (members sign in only through the connections) or stop requiring it')
    .addOption(new Option('--required <bool>', 'true or false').choices(['true', 'false']).makeOptionMandatory())
    .addOption(tenantOption())
    .addOption(formatOption())
    .action(async (opts: { required: 'true' | 'false'; tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const s = await call(conn, 'sso set', sdk.updateSsoSettings({ client: conn.client, headers: tenantHeaders(opts.tenant), body: { sso_required: opts.required === 'true' }, signal: timeout() }), { forbidden: null });
      showSettings(cmd, opts.format, s);
    });
}
