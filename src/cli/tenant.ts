/**
 * `tenantctl tenant create|list|update|audit`: tenants on the generated client (platform admin).
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import * as sdk from '../../generated/sdk.gen';
import type { AuditReport, AuditViolation, Tenant, TenantSettings, TenantStatusUpdate } from '../../generated/types.gen';
import { call, connect, REQUEST_TIMEOUT_MS, type Connection } from './api';
import type { CommandHelpers, Format } from './command';
import { CliError, EXIT_ERROR } from './errors';
import { renderPairs, renderTable, type Style } from './output';
import { registerTenantTokenCommand } from './tenant-token';

const SLUG = /^[a-z0-9-]+$/;

/** Registers the `tenant` command group on `program`. */
export function registerTenantCommands(program: Command, h: CommandHelpers): void {
  const { globals, styles, formatOption, print, progress, setExitCode } = h;
  const tenant = program.command('tenant').description('create, list, get, update, link, delete and audit tenants (platform admin); print your tenant token');
  registerTenantTokenCommand(tenant, h);

  tenant
    .command('create')
    .description('create a tenant')
    .requiredOption('--name <name>', 'display name (1-255 characters)', parseName)
    .requiredOption('--slug <slug>', 'unique slug: lowercase letters, digits and hyphens', parseSlug('--slug'))
    .option('--sample-data', 'add sample boards, generations, a provider configuration and a credit grant', false)
    .option('--settings <json>', 'tenant settings as a JSON object, e.g. \'{"billing_plan":"pro"}\'', parseSettings)
    .option('--idempotency-key <key>', 'retry-safe key: a replay answers the first result')
    .addOption(formatOption())
    .action(async (opts: { name: string; slug: string; sampleData: boolean; settings?: TenantSettings; idempotencyKey?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      const created = await call(
        conn,
        'tenant create',
        sdk.createTenant({
          client: conn.client,
          body: { name: opts.name, slug: opts.slug, include_sample_data: opts.sampleData, ...(opts.settings ? { settings: opts.settings } : {}) },
          headers: opts.idempotencyKey ? { 'Idempotency-Key': opts.idempotencyKey } : undefined,
          signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        }),
      );
      if (opts.format === 'json') return print(`${JSON.stringify(created, null, 2)}\n`);
      const { out } = styles(cmd);
      print(`${created.existing ? created.message : out.green(created.message)}\n`);
      print(
        renderPairs(
          [
            ['tenant_id', created.tenant_id],
            ['name', created.name],
            ['slug', created.slug],
            ['existing', String(created.existing)],
          ],
          out,
        ),
      );
    });

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

  tenant
    .command('update')
    .description("change a tenant: name, slug, settings, status (approve), and its membership policy (whether callers named by the identity provider's claims become members)")
    .argument('<tenant>', 'slug or tenant id')
    .option('--name <name>', 'new display name (1-255 characters)', parseName)
    .option('--slug <slug>', 'new slug (the default tenant keeps its slug)', parseSlug('--slug'))
    .option('--settings <json>', 'settings as a JSON object; replaces the stored object', parseSettings)
    .addOption(new Option('--status <status>', 'active approves a pending tenant').choices(['active', 'pending_approval']))
    .option('--provision-from-claims <bool>', 'true: callers whose token names this tenant become members on first use; false: invitation only', parseBool)
    .option('--claims-issuer <url>', "provision only from tokens of this issuer (their 'iss')", parseIssuer)
    .option('--any-issuer', 'lift the issuer restriction (claims_issuer null)', false)
    .option('--roles-from-claims <bool>', "true: the member's role follows the token's role claim on every request; false: ignore it", parseBool)
    .addOption(formatOption())
    .action(
      async (
        ref: string,
        opts: {
          name?: string;
          slug?: string;
          settings?: TenantSettings;
          status?: TenantStatusUpdate;
          provisionFromClaims?: boolean;
          claimsIssuer?: string;
          anyIssuer: boolean;
          rolesFromClaims?: boolean;
          format: Format;
        },
        cmd: Command,
      ) => {
        const policyChange = opts.provisionFromClaims !== undefined || opts.claimsIssuer !== undefined || opts.anyIssuer || opts.rolesFromClaims !== undefined;
        if (!policyChange && opts.name === undefined && opts.slug === undefined && opts.settings === undefined && opts.status === undefined) {
          throw new CliError(
            'nothing to change: give --name, --slug, --settings, --status, --provision-from-claims true|false, --claims-issuer <url>, --any-issuer or --roles-from-claims true|false',
          );
        }
        if (opts.claimsIssuer !== undefined && opts.anyIssuer) throw new CliError('--claims-issuer and --any-issuer contradict each other');
        const conn = connect(globals(cmd));
        const tenantId = await resolveTenantId(conn, ref);
        const updated = await call(
          conn,
          'tenant update',
          sdk.updateTenant({
            client: conn.client,
            path: { tenant_id: tenantId },
            body: {
              ...(opts.name !== undefined ? { name: opts.name } : {}),
              ...(opts.slug !== undefined ? { slug: opts.slug } : {}),
              ...(opts.settings !== undefined ? { settings: opts.settings } : {}),
              ...(opts.status !== undefined ? { status: opts.status } : {}),
              ...(policyChange
                ? {
                    membership_policy: {
                      ...(opts.provisionFromClaims !== undefined ? { provision_from_claims: opts.provisionFromClaims } : {}),
                      ...(opts.claimsIssuer !== undefined ? { claims_issuer: opts.claimsIssuer } : {}),
                      ...(opts.anyIssuer ? { claims_issuer: null } : {}),
                      ...(opts.rolesFromClaims !== undefined ? { roles_from_claims: opts.rolesFromClaims } : {}),
                    },
                  }
                : {}),
            },
            signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
          }),
        );
        if (opts.format === 'json') return print(`${JSON.stringify(updated, null, 2)}\n`);
        const { out } = styles(cmd);
        print(`${out.green(`Tenant '${updated.name}' (${updated.slug}) updated.`)}\n`);
        print(renderPairs(tenantPairs(updated), out));
      },
    );

  // Links are a set on the tenant: read it, change it, write it back (PUT replaces the set).
  const linkCommand = (name: 'link' | 'unlink', description: string) =>
    tenant
      .command(name)
      .description(description)
      .argument('<tenant>', 'slug or tenant id')
      .requiredOption('--issuer <url>', "the identity provider's issuer (the tokens' 'iss')", parseIssuer)
      .requiredOption('--organization-id <id>', "the organization's id in the provider's tokens (SERVICE_JWT_TENANT_ID_CLAIM)", parseOrganizationId)
      .addOption(formatOption())
      .action(async (ref: string, opts: { issuer: string; organizationId: string; format: Format }, cmd: Command) => {
        const conn = connect(globals(cmd));
        const tenantId = await resolveTenantId(conn, ref);
        const current = await call(conn, `tenant ${name}`, sdk.getTenant({ client: conn.client, path: { tenant_id: tenantId }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
        const others = (current.identity_links ?? []).filter((l) => l.issuer !== opts.issuer || l.organization_id !== opts.organizationId);
        const links = name === 'link' ? [...others, { issuer: opts.issuer, organization_id: opts.organizationId }] : others;
        if (name === 'unlink' && links.length === (current.identity_links ?? []).length) {
          throw new CliError(`tenant '${current.slug}' has no link to organization '${opts.organizationId}' of ${opts.issuer}`);
        }
        const updated = await call(
          conn,
          `tenant ${name}`,
          sdk.updateTenant({ client: conn.client, path: { tenant_id: tenantId }, body: { identity_links: links }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
        );
        if (opts.format === 'json') return print(`${JSON.stringify(updated, null, 2)}\n`);
        const { out } = styles(cmd);
        print(`${out.green(`Tenant '${updated.name}' (${updated.slug}) ${name === 'link' ? 'linked to' : 'unlinked from'} organization '${opts.organizationId}' of ${opts.issuer}.`)}\n`);
        const now = updated.identity_links ?? [];
        if (!now.length) return print('No identity links.\n');
        print(
          renderTable(
            now,
            [
              { header: 'ISSUER', value: (l) => l.issuer },
              { header: 'ORGANIZATION ID', value: (l) => l.organization_id },
            ],
            out,
          ),
        );
      });
  linkCommand('link', "link a tenant to an identity provider's organization: tokens of that issuer carrying its id resolve to the tenant");
  linkCommand('unlink', "remove a tenant's link to an identity provider's organization");

  tenant
    .command('audit')
    .description('audit tenant isolation; exit 0 clean, 1 violations found, 2 error')
    .option('--tenant <slug>', 'audit only this tenant', parseSlug('--tenant'))
    .addOption(formatOption())
    .action(async (opts: { tenant?: string; format: Format }, cmd: Command) => {
      const conn = connect(globals(cmd));
      progress(`Auditing ${opts.tenant ? `tenant ${opts.tenant}` : 'all tenants'} at ${conn.baseUrl}…`);
      const report = await call(
        conn,
        'tenant audit',
        sdk.auditTenants({ client: conn.client, query: opts.tenant ? { tenant_slug: opts.tenant } : undefined, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
      ).catch((err: unknown) => {
        // Exit 1 means "violations found" here, so every failure is 2.
        throw err instanceof CliError ? new CliError(err.message, EXIT_ERROR) : err;
      });
      if (opts.format === 'json') print(`${JSON.stringify(report, null, 2)}\n`);
      else print(renderAudit(report, styles(cmd).out));
      setExitCode(report.total_violations > 0 ? 1 : 0);
    });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A tenant id as given, or the id of the tenant with exactly this slug (CliError when none). */
export async function resolveTenantId(conn: Connection, ref: string): Promise<string> {
  if (UUID.test(ref)) return ref;
  if (!SLUG.test(ref)) throw new CliError(`'${ref}' is neither a tenant id nor a slug (lowercase letters, digits and hyphens)`);
  const page = await call(
    conn,
    'tenant lookup',
    sdk.listTenants({ client: conn.client, query: { q: ref, limit: 1000 }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
  );
  const match = page.tenants.find((t) => t.slug === ref);
  if (!match) throw new CliError(`no tenant with slug '${ref}'`, 1);
  return match.tenant_id;
}

/** A tenant as key/value lines (`tenant get`, `tenant update`). */
export function tenantPairs(t: Tenant): Array<[string, string]> {
  return [
    ['tenant_id', t.tenant_id],
    ['name', t.name],
    ['slug', t.slug],
    ['status', t.status],
    ['settings', JSON.stringify(t.settings)],
    ['provision_from_claims', String(t.membership_policy.provision_from_claims)],
    ['claims_issuer', t.membership_policy.claims_issuer ?? '(any issuer)'],
    ['roles_from_claims', String(t.membership_policy.roles_from_claims ?? false)],
    ['identity_links', (t.identity_links ?? []).map((l) => `${l.issuer} ${l.organization_id}`).join(', ') || '(none)'],
    ['created_at', t.created_at],
    ['updated_at', t.updated_at],
  ];
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

function renderAudit(report: AuditReport, style: Style): string {
  const parts: string[] = [];
  parts.push(
    renderTable(
      report.tenants,
      [
        { header: 'TENANT', value: (t) => t.slug },
        { header: 'USERS', value: (t) => String(t.statistics.users ?? 0), right: true },
        { header: 'BOARDS', value: (t) => String(t.statistics.boards ?? 0), right: true },
        { header: 'MEMBERS', value: (t) => String(t.statistics.board_members ?? 0), right: true },
        { header: 'GENERATIONS', value: (t) => String(t.statistics.generations ?? 0), right: true },
        { header: 'PROVIDERS', value: (t) => String(t.statistics.provider_configs ?? 0), right: true },
        { header: 'CREDIT TXNS', value: (t) => String(t.statistics.credit_transactions ?? 0), right: true },
        { header: 'VIOLATIONS', value: (t) => String(t.violations.length), right: true },
      ],
      style,
    ),
  );
  const rows: Array<AuditViolation & { tenant: string }> = [
    ...report.global_violations.map((v) => ({ ...v, tenant: '(global)' })),
    ...report.tenants.flatMap((t) => t.violations.map((v) => ({ ...v, tenant: t.slug }))),
  ];
  if (rows.length) {
    parts.push(
      '\n' +
        renderTable(
          rows,
          [
            { header: 'TENANT', value: (v) => v.tenant },
            { header: 'CHECK', value: (v) => v.check },
            { header: 'TABLE', value: (v) => v.table },
            { header: 'ROW', value: (v) => v.row_id ?? '-' },
            { header: 'MESSAGE', value: (v) => v.message },
          ],
          style,
        ),
    );
  }
  const n = report.total_violations;
  const scope = `${report.tenants.length} tenant${report.tenants.length === 1 ? '' : 's'}`;
  parts.push('\n' + (n === 0 ? style.green(`No isolation violations in ${scope}.`) : style.red(`${n} violation${n === 1 ? '' : 's'} found in ${scope}.`)) + '\n');
  if (report.truncated) parts.push('Some checks found more violations than listed (at most 1000 per check and table).\n');
  return parts.join('');
}

// Flag parsers: a bad value is a usage error (exit 2) naming the flag and what it wants.

function parseName(v: string): string {
  const name = v.trim();
  if (name.length < 1 || name.length > 255) throw new InvalidArgumentError('--name must be 1-255 characters.');
  return name;
}

function parseSlug(flag: string) {
  return (v: string): string => {
    if (!SLUG.test(v) || v.length > 255) throw new InvalidArgumentError(`${flag} must be 1-255 lowercase letters, digits and hyphens.`);
    return v;
  };
}

function parseQuery(v: string): string {
  if (v.length < 1 || v.length > 255) throw new InvalidArgumentError('--query must be 1-255 characters.');
  return v;
}

function parseLimit(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 1000) throw new InvalidArgumentError('--limit must be an integer from 1 to 1000.');
  return Number(v);
}

function parseBool(v: string): boolean {
  const lower = v.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(lower)) return true;
  if (['false', '0', 'no'].includes(lower)) return false;
  throw new InvalidArgumentError('expected true or false.');
}

function parseIssuer(v: string): string {
  const s = v.trim();
  if (s === '' || s.length > 2048) throw new InvalidArgumentError('expected an issuer URL of 1 to 2048 characters.');
  return s;
}

function parseOrganizationId(v: string): string {
  if (v.trim() === '' || v.length > 255) throw new InvalidArgumentError('--organization-id must be 1 to 255 characters.');
  return v;
}

function parseSettings(v: string): TenantSettings {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch (err) {
    throw new InvalidArgumentError(`--settings is not valid JSON (${(err as Error).message}).`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError('--settings must be a JSON object, e.g. \'{"billing_plan":"pro"}\'.');
  return parsed as TenantSettings;
}
