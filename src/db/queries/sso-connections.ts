/**
 * A tenant's SSO connections and settings (`sso_connections`, `sso_settings`, migration 028).
 * Every statement names its tenant and runs in the tenant's transaction; only
 * `selectConnectionOfAnyTenant` reads across tenants (the platform reader: a callback names only
 * its connection).
 */
import type { Knex } from 'knex';
import type { SsoConnectionStatus, SsoConnectionType, StoredSsoConnection } from '../../context/records';
import { queryRows } from '../request-transaction';
import { platformReadStatements, tenantStatements } from '../tenant-scope';

export type SsoType = SsoConnectionType;
export type SsoStatus = SsoConnectionStatus;

interface Row {
  tenant_id: string;
  id: string;
  type: SsoType;
  name: string;
  status: SsoStatus;
  oidc_issuer: string | null;
  oidc_client_id: string | null;
  oidc_client_secret: string | null;
  oidc_scopes: string[] | null;
  saml_idp_entity_id: string | null;
  saml_idp_sso_url: string | null;
  saml_idp_certificate: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = [
  'tenant_id',
  'id',
  'type',
  'name',
  'status',
  'oidc_issuer',
  'oidc_client_id',
  'oidc_client_secret',
  'oidc_scopes',
  'saml_idp_entity_id',
  'saml_idp_sso_url',
  'saml_idp_certificate',
  'created_at',
  'updated_at',
] as const;

const toConnection = (r: Row): StoredSsoConnection => ({
  tenantId: r.tenant_id,
  id: r.id,
  type: r.type,
  name: r.name,
  status: r.status,
  oidcIssuer: r.oidc_issuer,
  oidcClientId: r.oidc_client_id,
  oidcStoredSecret: r.oidc_client_secret,
  oidcScopes: r.oidc_scopes,
  samlIdpEntityId: r.saml_idp_entity_id,
  samlIdpSsoUrl: r.saml_idp_sso_url,
  samlIdpCertificate: r.saml_idp_certificate,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export interface NewSsoConnection {
  readonly tenantId: string;
  readonly id: string;
  readonly type: SsoType;
  readonly name: string;
  readonly oidc?: { issuer: string; clientId: string; storedSecret: string; scopes: readonly string[] };
  readonly saml?: { idpEntityId: string; idpSsoUrl: string; idpCertificate: string };
}

export async function insertConnection(trx: Knex.Transaction, c: NewSsoConnection): Promise<StoredSsoConnection> {
  const [row] = (await trx('sso_connections')
    .insert({
      tenant_id: c.tenantId,
      id: c.id,
      type: c.type,
      name: c.name,
      oidc_issuer: c.oidc?.issuer ?? null,
      oidc_client_id: c.oidc?.clientId ?? null,
      oidc_client_secret: c.oidc?.storedSecret ?? null,
      oidc_scopes: c.oidc ? [...c.oidc.scopes] : null,
      saml_idp_entity_id: c.saml?.idpEntityId ?? null,
      saml_idp_sso_url: c.saml?.idpSsoUrl ?? null,
      saml_idp_certificate: c.saml?.idpCertificate ?? null,
    })
    .returning([...COLUMNS])) as Row[];
  return toConnection(row!);
}

/** The tenant's connections, oldest first. */
export async function selectConnections(trx: Knex.Transaction, tenantId: string): Promise<StoredSsoConnection[]> {
  return ((await trx('sso_connections').where({ tenant_id: tenantId }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select([...COLUMNS])) as Row[]).map(toConnection);
}

/** One of the tenant's connections; `forUpdate` locks it. */
export async function selectConnection(trx: Knex.Transaction, tenantId: string, id: string, forUpdate = false): Promise<StoredSsoConnection | null> {
  const q = trx('sso_connections').where({ tenant_id: tenantId, id }).first([...COLUMNS]);
  const row = (await (forUpdate ? q.forUpdate() : q)) as Row | undefined;
  return row ? toConnection(row) : null;
}

/** Serializes connection changes of one tenant (the limit, and sso_required's "an active connection"); the count. */
export async function lockTenantConnections(trx: Knex.Transaction, tenantId: string): Promise<number> {
  await trx.raw(`select pg_advisory_xact_lock(hashtextextended('sso-connections:' || ?, 0))`, [tenantId]);
  const row = (await trx('sso_connections').where({ tenant_id: tenantId }).count<{ n: string }[]>({ n: '*' }))[0];
  return Number(row?.n ?? 0);
}

export interface ConnectionPatch {
  readonly name?: string;
  readonly status?: SsoStatus;
  readonly oidcStoredSecret?: string;
  readonly oidcScopes?: readonly string[];
  readonly samlIdpSsoUrl?: string;
  readonly samlIdpCertificate?: string;
}

export async function updateConnection(trx: Knex.Transaction, tenantId: string, id: string, p: ConnectionPatch): Promise<StoredSsoConnection> {
  const set: Record<string, unknown> = { updated_at: trx.fn.now() };
  if (p.name !== undefined) set.name = p.name;
  if (p.status !== undefined) set.status = p.status;
  if (p.oidcStoredSecret !== undefined) set.oidc_client_secret = p.oidcStoredSecret;
  if (p.oidcScopes !== undefined) set.oidc_scopes = [...p.oidcScopes];
  if (p.samlIdpSsoUrl !== undefined) set.saml_idp_sso_url = p.samlIdpSsoUrl;
  if (p.samlIdpCertificate !== undefined) set.saml_idp_certificate = p.samlIdpCertificate;
  const [row] = (await trx('sso_connections').where({ tenant_id: tenantId, id }).update(set).returning([...COLUMNS])) as Row[];
  return toConnection(row!);
}

export async function deleteConnection(trx: Knex.Transaction, tenantId: string, id: string): Promise<void> {
  await trx('sso_connections').where({ tenant_id: tenantId, id }).delete();
}

/** Whether the tenant requires SSO, and its oldest active connection: one statement. */
const TENANT_SSO = `select s.sso_required, s.updated_at, c.id, c.type
       from (select 1) one
       left join sso_settings s on s.tenant_id = $1::uuid
       left join lateral (select id, type from sso_connections
                           where tenant_id = $1::uuid and status = 'active'
                           order by created_at, id limit 1) c on true`;

type TenantSsoRow = { sso_required: boolean | null; updated_at: Date | null; id: string | null; type: SsoType | null };
type TenantSsoFacts = { ssoRequired: boolean; updatedAt: Date | null; connection: { id: string; type: SsoType } | null };

const tenantSsoOf = (r: TenantSsoRow): TenantSsoFacts => ({ ssoRequired: r.sso_required ?? false, updatedAt: r.updated_at, connection: r.id && r.type ? { id: r.id, type: r.type } : null });

/** `sso_required` and the oldest active connection, inside `trx`. */
export async function selectTenantSso(trx: Knex.Transaction, tenantId: string): Promise<TenantSsoFacts> {
  return tenantSsoOf((await queryRows<TenantSsoRow>(trx, TENANT_SSO, [tenantId]))[0]!);
}

/** The same in one round trip of its own, confined to the tenant (a sign-in's lookup). */
export async function selectTenantSsoNow(db: Knex, tenantId: string): Promise<TenantSsoFacts> {
  const [result] = await tenantStatements(db, tenantId, [TENANT_SSO], [tenantId]);
  return tenantSsoOf(result!.rows[0] as TenantSsoRow);
}

export async function upsertSsoRequired(trx: Knex.Transaction, tenantId: string, required: boolean): Promise<Date> {
  const { rows } = await trx.raw<{ rows: Array<{ updated_at: Date }> }>(
    `insert into sso_settings (tenant_id, sso_required) values (?, ?)
       on conflict (tenant_id) do update set sso_required = excluded.sso_required, updated_at = now()
     returning updated_at`,
    [tenantId, required],
  );
  return rows[0]!.updated_at;
}

/** A connection of any tenant, read by the platform reader in one round trip (a callback names only its connection), or null. */
export async function selectConnectionOfAnyTenant(db: Knex, id: string): Promise<StoredSsoConnection | null> {
  const [result] = await platformReadStatements(db, [`select ${COLUMNS.join(', ')} from sso_connections where id = $1::uuid`], [id]);
  const row = result!.rows[0] as Row | undefined;
  return row ? toConnection(row) : null;
}
