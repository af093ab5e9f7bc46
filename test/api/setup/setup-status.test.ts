/**
 * GET /api/setup/status: every field, recommendations that speak of this deployment, and no
 * side effects. Runs on a database of its own, so "every table" and "no tenant besides the
 * default" mean exactly that.
 */
import crypto from 'node:crypto';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { TENANT_TABLES } from '../../../src/db/schema';
import { setupRecommendations, type DeploymentFacts } from '../../../src/domain/setup-status';
import { startTestApp, type TestApp } from '../../helpers/app';
import { createFreshDatabase, type FreshDatabase } from '../../helpers/fresh-database';
import { adminToken, unique } from '../../helpers/factories';

const admin = `Bearer ${adminToken()}`;

/** A compact HS256 JWT (the `jwt` provider's tokens). */
function hs256(claims: Record<string, unknown>, secret: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${crypto.createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

describe('setupRecommendations', () => {
  const production: DeploymentFacts = {
    multiTenantMode: true,
    authProvider: 'oidc',
    jwtIssuer: null,
    jwtAudience: 'tenant-service',
    frontendBaseUrl: 'https://app.example.com',
    defaultTenantSlug: 'default',
    dataDir: '/var/lib/tenant-service',
    embeddedDatabase: false,
    rateLimitStore: 'redis',
    hasDefaultTenant: true,
    otherTenants: 3,
    pendingApproval: 0,
    keyEncryptionSecretSet: true,
  };

  it('has nothing to say about a production-ready deployment', () => {
    expect(setupRecommendations(production)).toEqual([]);
  });

  it.each<[string, Partial<DeploymentFacts>, RegExp]>([
    ['local auth', { authProvider: 'local' }, /built-in local key \(SERVICE_AUTH_PROVIDER=local\).*SERVICE_OIDC_ISSUER/],
    ['jwt without issuer and audience', { authProvider: 'jwt', jwtAudience: null }, /jwt provider are not checked for their issuer and audience: set SERVICE_JWT_ISSUER and SERVICE_JWT_AUDIENCE/],
    ['oidc without audience', { jwtAudience: null }, /oidc provider are not checked for their audience: set SERVICE_JWT_AUDIENCE/],
    ['the embedded database', { embeddedDatabase: true }, /embedded PostgreSQL in \/var\/lib\/tenant-service: set SERVICE_DATABASE_URL/],
    ['rate limits off', { rateLimitStore: null }, /Rate limits are off \(SERVICE_RATE_LIMIT_ENABLED=false\): turn them on/],
    ['in-memory rate-limit counters', { rateLimitStore: 'memory' }, /memory.*set SERVICE_REDIS_URL/],
    ['Redis unreachable', { rateLimitStore: 'degraded' }, /Redis is unreachable/],
    ['no frontend URL', { frontendBaseUrl: null }, /SERVICE_FRONTEND_BASE_URL is not set/],
    ['multi-tenant mode with only the default tenant', { otherTenants: 0 }, /only the default tenant 'default' exists: create a tenant with POST \/api\/setup\/tenant/],
    ['single-tenant mode', { multiTenantMode: false, otherTenants: 0 }, /Single-tenant mode: every request uses the default tenant 'default'.*SERVICE_MULTI_TENANT_MODE=true/],
    ['tenants unreachable in single-tenant mode', { multiTenantMode: false, otherTenants: 2 }, /2 tenants besides the default exist but cannot be reached/],
    ['tenants awaiting approval', { pendingApproval: 1 }, /1 tenant awaits approval/],
    ['a missing default tenant', { hasDefaultTenant: false }, /default tenant 'default' is missing: restart the service/],
    ['memory decisions behind a pooler without a listen URL', { decisionMemory: 'pooler_without_listen_url' }, /transaction pooler, which cannot carry LISTEN.*SERVICE_DATABASE_LISTEN_URL/],
    ['memory decisions while the listener is not listening', { decisionMemory: 'listener_not_listening' }, /change listener of this instance is not listening/],
    ['memory decisions turned off', { decisionMemory: 'disabled' }, /SERVICE_DECISION_CACHE_ENTRIES=0/],
    ['unencrypted tenant-token keys', { keyEncryptionSecretSet: false }, /signing keys are stored unencrypted.*set SERVICE_KEY_ENCRYPTION_SECRET/],
  ])('speaks of %s', (_what, change, sentence) => {
    const out = setupRecommendations({ ...production, ...change });
    expect(out).toHaveLength(change.multiTenantMode === false && change.otherTenants ? 2 : 1);
    expect(out.some((s) => sentence.test(s))).toBe(true);
  });
});

describe('GET /api/setup/status', () => {
  let fresh: FreshDatabase;
  let owner: Knex;
  const apps: TestApp[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const app = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, ...env }, { poolMax: 2 });
    apps.push(app);
    return app;
  };
  const status = (app: TestApp) => request(app.app).get('/api/setup/status').set('Authorization', admin).expect(200);

  /** Rows of every table of the database, migrations bookkeeping included. */
  async function allRowCounts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const table of ['tenants', 'idempotency_keys', ...TENANT_TABLES, 'knex_migrations', 'knex_migrations_lock']) {
      const [{ n }] = await owner(table).count({ n: '*' });
      out[table] = Number(n);
    }
    return out;
  }

  beforeAll(async () => {
    fresh = await createFreshDatabase('tenant_service_status');
    owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 1 } });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await owner.destroy();
    await fresh.drop();
  });

  it('reports every field of a fresh single-tenant deployment', async () => {
    const app = await start();
    const def = await owner('tenants').where({ is_default: true }).first();
    const r = await status(app);
    expect(r.body).toEqual({
      setup_needed: false,
      has_default_tenant: true,
      default_tenant_id: def.id,
      default_tenant_slug: 'default',
      multi_tenant_mode: false,
      auth_provider: 'local',
      recommendations: expect.any(Array),
    });
    const text = r.body.recommendations.join('\n');
    expect(text).toMatch(/SERVICE_AUTH_PROVIDER=local/);
    expect(text).toMatch(/Rate limits are off/);
    expect(text).toMatch(/SERVICE_FRONTEND_BASE_URL is not set/);
    expect(text).toMatch(/Single-tenant mode: every request uses the default tenant 'default'/);
    expect(text).not.toMatch(/embedded PostgreSQL/); // the tests run on an external server
    expect(text).not.toMatch(/only the default tenant/);
  });

  it('has no side effects: every table keeps its rows, and it works on a read-only connection', async () => {
    const app = await start({ SERVICE_MULTI_TENANT_MODE: 'true' });
    const before = await allRowCounts();
    const def = await owner('tenants').where({ is_default: true }).first();
    for (let i = 0; i < 3; i++) await status(app);
    expect(await allRowCounts()).toEqual(before);
    expect(await owner('tenants').where({ is_default: true }).first()).toEqual(def);

    // Every transaction of this app is read-only: a write anywhere in the status would fail.
    const readOnly = await start({ SERVICE_DATABASE_URL: `${fresh.url}?options=-c%20default_transaction_read_only%3Don` });
    const r = await status(readOnly);
    expect(r.body.has_default_tenant).toBe(true);
    await request(readOnly.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'x', slug: unique('ro') }).expect(500);
  });

  it('multi-tenant mode: recommends creating a tenant until one besides the default exists', async () => {
    const app = await start({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_FRONTEND_BASE_URL: 'https://app.example.com' });
    const before = await status(app);
    expect(before.body.multi_tenant_mode).toBe(true);
    expect(before.body.recommendations.join('\n')).toMatch(/only the default tenant 'default' exists/);
    expect(before.body.recommendations.join('\n')).not.toMatch(/SERVICE_FRONTEND_BASE_URL/);
    expect(before.body.recommendations.join('\n')).not.toMatch(/Single-tenant mode/);

    const created = await request(app.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'Second', slug: unique('second') }).expect(201);
    const after = await status(app);
    expect(after.body.recommendations.join('\n')).not.toMatch(/only the default tenant/);

    await owner('tenants').where({ id: created.body.tenant_id }).update({ status: 'pending_approval' });
    expect((await status(app)).body.recommendations.join('\n')).toMatch(/1 tenant awaits approval/);
    await owner('tenants').where({ id: created.body.tenant_id }).del();
  });

  it('rate limits on without Redis: recommends sharing the counters', async () => {
    const app = await start({ SERVICE_RATE_LIMIT_ENABLED: 'true' });
    const r = await status(app);
    expect(r.body.recommendations.join('\n')).toMatch(/Rate-limit counters live in this process's memory.*SERVICE_REDIS_URL/);
    expect(r.body.recommendations.join('\n')).not.toMatch(/Rate limits are off/);
  });

  it('reports the jwt provider it runs with', async () => {
    const app = await start({ SERVICE_JWT_SECRET: 'x'.repeat(40), SERVICE_JWT_ISSUER: 'https://issuer.example.com' });
    // A local token is not valid here; sign an HS256 one with the secret.
    const token = hs256({ sub: unique('admin'), roles: ['admin'], iss: 'https://issuer.example.com', exp: Math.floor(Date.now() / 1000) + 60 }, 'x'.repeat(40));
    const r = await request(app.app).get('/api/setup/status').set('Authorization', `Bearer ${token}`).expect(200);
    expect(r.body.auth_provider).toBe('jwt');
    expect(r.body.recommendations.join('\n')).toMatch(/jwt provider are not checked for their audience/);
    expect(r.body.recommendations.join('\n')).not.toMatch(/SERVICE_AUTH_PROVIDER=local/);
  });

  it('setup_needed when the default tenant is missing, and reading it does not recreate it', async () => {
    const app = await start();
    const def = await owner('tenants').where({ is_default: true }).first();
    await owner('tenants').where({ id: def.id }).del();
    try {
      const r = await status(app);
      expect(r.body).toMatchObject({ setup_needed: true, has_default_tenant: false, default_tenant_id: null, default_tenant_slug: 'default' });
      expect(r.body.recommendations.join('\n')).toMatch(/default tenant 'default' is missing/);
      expect(await owner('tenants').where({ is_default: true }).first()).toBeUndefined();
    } finally {
      await owner('tenants').insert(def);
    }
  });
});
