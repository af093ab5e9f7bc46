import path from 'node:path';
import { ConfigError, loadConfig, redactUrl } from '../../src/config';

describe('loadConfig', () => {
  it('has the documented defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      multiTenantMode: false,
      jwtTenantClaim: null,
      registrationRequiresApproval: false,
      registrationAllowedDomains: null,
      maxTenantsPerUser: null,
      frontendBaseUrl: null,
      logLevel: 'info',
      databaseUrl: null,
      dataDir: path.resolve('./.data'),
      redisUrl: null,
      authProvider: 'local',
      adminRole: 'admin',
      adminRoleClaim: 'roles',
      defaultTenantSlug: 'default',
      rateLimitEnabled: true,
      redisKeyPrefix: 'tenant-service:',
      trustProxy: false,
      graphqlPath: '/graphql',
      eventRetentionDays: 365,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('SERVICE_REQUEST_TIMEOUT_MS: 60 s by default, 100 ms to an hour', () => {
    expect(loadConfig({}).requestTimeoutMs).toBe(60_000);
    expect(loadConfig({ SERVICE_REQUEST_TIMEOUT_MS: '1000' }).requestTimeoutMs).toBe(1000);
    for (const v of ['0', '99', '3600001', '1m', '-5']) expect(() => loadConfig({ SERVICE_REQUEST_TIMEOUT_MS: v })).toThrow(/SERVICE_REQUEST_TIMEOUT_MS: expected an integer from 100 to 3600000/);
  });

  it('SERVICE_EVENT_RETENTION_DAYS: whole days from 1', () => {
    expect(loadConfig({ SERVICE_EVENT_RETENTION_DAYS: '30' }).eventRetentionDays).toBe(30);
    expect(() => loadConfig({ SERVICE_EVENT_RETENTION_DAYS: '0' })).toThrow(/SERVICE_EVENT_RETENTION_DAYS/);
    expect(() => loadConfig({ SERVICE_EVENT_RETENTION_DAYS: 'a year' })).toThrow(/SERVICE_EVENT_RETENTION_DAYS/);
  });

  it('tenant tokens: defaults, limits, and issuer and audience apart from the accepted tokens', () => {
    expect(loadConfig({})).toMatchObject({ tenantTokenIssuer: 'http://127.0.0.1:8080', tenantTokenAudience: 'tenant-service-products', tenantTokenTtlSeconds: 300, keyEncryptionSecret: null });
    expect(loadConfig({ SERVICE_HOST: '::1', SERVICE_PORT: '9000' }).tenantTokenIssuer).toBe('http://[::1]:9000');
    const set = loadConfig({ SERVICE_TENANT_TOKEN_ISSUER: 'https://tenants.example.com', SERVICE_TENANT_TOKEN_AUDIENCE: 'acme-api', SERVICE_TENANT_TOKEN_TTL: '3600', SERVICE_KEY_ENCRYPTION_SECRET: 'x'.repeat(32) });
    expect(set).toMatchObject({ tenantTokenIssuer: 'https://tenants.example.com', tenantTokenAudience: 'acme-api', tenantTokenTtlSeconds: 3600, keyEncryptionSecret: 'x'.repeat(32) });
    for (const ttl of ['0', '3601', '5m', '-1']) expect(() => loadConfig({ SERVICE_TENANT_TOKEN_TTL: ttl })).toThrow(/SERVICE_TENANT_TOKEN_TTL: expected an integer from 1 to 3600/);
    expect(() => loadConfig({ SERVICE_KEY_ENCRYPTION_SECRET: 'short' })).toThrow(/SERVICE_KEY_ENCRYPTION_SECRET: must be at least 32 bytes/);
    expect(() => loadConfig({ SERVICE_KEY_ENCRYPTION_SECRET: 'short' })).not.toThrow(/short/);
    expect(() => loadConfig({ SERVICE_OIDC_ISSUER: 'https://idp.example.com', SERVICE_TENANT_TOKEN_ISSUER: 'https://idp.example.com' })).toThrow(/SERVICE_TENANT_TOKEN_ISSUER/);
    expect(() => loadConfig({ SERVICE_JWT_AUDIENCE: 'api', SERVICE_TENANT_TOKEN_AUDIENCE: 'api' })).toThrow(/SERVICE_TENANT_TOKEN_AUDIENCE/);
  });

  it('SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: off unless turned on', () => {
    expect(loadConfig({}).webhookAllowPrivateNetworks).toBe(false);
    expect(loadConfig({ SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }).webhookAllowPrivateNetworks).toBe(true);
    expect(() => loadConfig({ SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'sometimes' })).toThrow(/SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS/);
  });

  it('SERVICE_DECISION_TENANT_TOKEN: off unless turned on', () => {
    expect(loadConfig({}).decisionTenantToken).toBe(false);
    expect(loadConfig({ SERVICE_DECISION_TENANT_TOKEN: 'yes' }).decisionTenantToken).toBe(true);
    expect(() => loadConfig({ SERVICE_DECISION_TENANT_TOKEN: 'maybe' })).toThrow(/SERVICE_DECISION_TENANT_TOKEN/);
  });

  it('SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: the contract limit unless set', () => {
    expect(loadConfig({}).rateLimitDecisionPerMinute).toBeNull();
    expect(loadConfig({ SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: '20000' }).rateLimitDecisionPerMinute).toBe(20000);
    expect(() => loadConfig({ SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: '0' })).toThrow(/SERVICE_RATE_LIMIT_DECISION_PER_MINUTE/);
    expect(() => loadConfig({ SERVICE_RATE_LIMIT_DECISION_PER_MINUTE: 'lots' })).toThrow(/SERVICE_RATE_LIMIT_DECISION_PER_MINUTE/);
  });

  it('SERVICE_EVENT_SETTINGS_KEYS: the keys whose values events copy, `none` for none', () => {
    expect(loadConfig({}).eventSettingsKeys).toEqual(['admin_email', 'billing_plan', 'features']);
    expect(loadConfig({ SERVICE_EVENT_SETTINGS_KEYS: ' theme, billing_plan ,,theme' }).eventSettingsKeys).toEqual(['theme', 'billing_plan']);
    expect(loadConfig({ SERVICE_EVENT_SETTINGS_KEYS: 'none' }).eventSettingsKeys).toEqual([]);
    expect(() => loadConfig({ SERVICE_EVENT_SETTINGS_KEYS: 'x'.repeat(256) })).toThrow(/SERVICE_EVENT_SETTINGS_KEYS/);
  });

  it('SERVICE_DATABASE_PREPARED_STATEMENTS: on unless turned off', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ SERVICE_DATABASE_PREPARED_STATEMENTS: 'false' }).databasePreparedStatements).toBe(false);
  });

  it('SERVICE_JWT_CACHE_SIZE: the token cache holds 10 000 tokens unless sized, 0 turns it off', () => {
    expect(loadConfig({}).jwtCacheSize).toBe(10_000);
    expect(loadConfig({ SERVICE_JWT_CACHE_SIZE: '0' }).jwtCacheSize).toBe(0);
    expect(loadConfig({ SERVICE_JWT_CACHE_SIZE: '10000' }).jwtCacheSize).toBe(10_000);
    expect(() => loadConfig({ SERVICE_JWT_CACHE_SIZE: '-1' })).toThrow(/SERVICE_JWT_CACHE_SIZE/);
    expect(() => loadConfig({ SERVICE_JWT_CACHE_SIZE: 'lots' })).toThrow(/SERVICE_JWT_CACHE_SIZE/);
  });

  it.each([
    ['true', true],
    ['1', true],
    ['yes', true],
    ['TRUE', true],
    ['false', false],
    ['0', false],
    ['no', false],
  ])('booleans: %s → %s', (v, out) => {
    expect(loadConfig({ SERVICE_MULTI_TENANT_MODE: v }).multiTenantMode).toBe(out);
  });

  it('lists: comma-separated or a JSON array, lowercased', () => {
    expect(loadConfig({ SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS: 'Acme.com, example.org' }).registrationAllowedDomains).toEqual(['acme.com', 'example.org']);
    expect(loadConfig({ SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS: '["acme.com"]' }).registrationAllowedDomains).toEqual(['acme.com']);
    expect(loadConfig({ SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS: 'null' }).registrationAllowedDomains).toBeNull();
  });

  it('picks the provider from the variable that is set', () => {
    expect(loadConfig({ SERVICE_JWT_SECRET: 'x'.repeat(32) }).authProvider).toBe('jwt');
    expect(loadConfig({ SERVICE_JWKS_URI: 'https://idp.example/jwks.json' }).authProvider).toBe('jwks');
    expect(loadConfig({ SERVICE_OIDC_ISSUER: 'https://idp.example', SERVICE_JWKS_URI: 'https://idp.example/jwks.json' }).authProvider).toBe('oidc');
    expect(loadConfig({ SERVICE_AUTH_PROVIDER: 'local', SERVICE_JWKS_URI: 'https://idp.example/jwks.json' }).authProvider).toBe('local');
  });

  it('SERVICE_DEBUG and SERVICE_LOG_LEVEL', () => {
    expect(loadConfig({ SERVICE_DEBUG: 'true' }).logLevel).toBe('debug');
    expect(loadConfig({ SERVICE_LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(loadConfig({ SERVICE_DEBUG: 'true', SERVICE_LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
  });

  it('reports every bad variable in one message', () => {
    let err: unknown;
    try {
      loadConfig({
        SERVICE_PORT: 'eighty',
        SERVICE_MULTI_TENANT_MODE: 'maybe',
        SERVICE_MAX_TENANTS_PER_USER: '-1',
        SERVICE_FRONTEND_BASE_URL: 'not a url',
        SERVICE_DATABASE_URL: 'mysql://u:secret@h/db',
        SERVICE_AUTH_PROVIDER: 'saml',
        SERVICE_LOG_LEVEL: 'loud',
        SERVICE_DEFAULT_TENANT_SLUG: 'Default Tenant',
        SERVICE_JWT_SECRET: 'short',
        SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS: 'acme.com,not_a_domain',
        SERVICE_GRAPHQL_PATH: 'graphql',
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as ConfigError).message;
    for (const name of [
      'SERVICE_PORT',
      'SERVICE_MULTI_TENANT_MODE',
      'SERVICE_MAX_TENANTS_PER_USER',
      'SERVICE_FRONTEND_BASE_URL',
      'SERVICE_DATABASE_URL',
      'SERVICE_AUTH_PROVIDER',
      'SERVICE_LOG_LEVEL',
      'SERVICE_DEFAULT_TENANT_SLUG',
      'SERVICE_JWT_SECRET',
      'SERVICE_TENANT_REGISTRATION_ALLOWED_DOMAINS',
      'SERVICE_GRAPHQL_PATH',
    ]) {
      expect(msg).toContain(name);
    }
    expect((err as ConfigError).problems).toHaveLength(11);
    // a password in a bad URL is not echoed
    expect(msg).not.toContain('secret');
  });

  it('a provider without its variable is an error', () => {
    expect(() => loadConfig({ SERVICE_AUTH_PROVIDER: 'jwks' })).toThrow(/SERVICE_JWKS_URI: required/);
    expect(() => loadConfig({ SERVICE_AUTH_PROVIDER: 'oidc' })).toThrow(/SERVICE_OIDC_ISSUER: required/);
    expect(() => loadConfig({ SERVICE_AUTH_PROVIDER: 'jwt' })).toThrow(/SERVICE_JWT_SECRET: required/);
  });

  it('redactUrl hides passwords', () => {
    expect(redactUrl('postgres://u:pw@h:5432/db')).toBe('postgres://u:***@h:5432/db');
    expect(redactUrl('postgres://h/db')).toBe('postgres://h/db');
  });
});

describe('membership and invitation settings', () => {
  it('has the documented defaults, the default slug always reserved', () => {
    const c = loadConfig({});
    expect(c.reservedSlugs).toEqual(['admin', 'api', 'app', 'default', 'help', 'root', 'setup', 'status', 'support', 'system', 'www']);
    expect(c.slugRetirementDays).toBe(90);
    expect(c.invitationTtlHours).toBe(168);
    expect(c.smtpUrl).toBeNull();
    expect(c.mailFrom).toBeNull();
    expect(loadConfig({ SERVICE_DEFAULT_TENANT_SLUG: 'main', SERVICE_RESERVED_SLUGS: 'Billing, ops' }).reservedSlugs).toEqual(['billing', 'ops', 'main']);
    expect(loadConfig({ SERVICE_RESERVED_SLUGS: '["a","b"]' }).reservedSlugs).toEqual(['a', 'b', 'default']);
  });

  it('reads the numbers and the mail settings', () => {
    const c = loadConfig({
      SERVICE_SLUG_RETIREMENT_DAYS: '0',
      SERVICE_INVITATION_TTL_HOURS: '24',
      SERVICE_SMTP_URL: 'smtp://user:pw@127.0.0.1:2525',
      SERVICE_MAIL_FROM: 'Acme <tenants@acme.test>',
    });
    expect(c).toMatchObject({ slugRetirementDays: 0, invitationTtlHours: 24, smtpUrl: 'smtp://user:pw@127.0.0.1:2525', mailFrom: 'Acme <tenants@acme.test>' });
  });

  it('names every bad variable, never the SMTP password', () => {
    let err: ConfigError | undefined;
    try {
      loadConfig({
        SERVICE_RESERVED_SLUGS: 'ok,Not_A_Slug!',
        SERVICE_SLUG_RETIREMENT_DAYS: '-1',
        SERVICE_INVITATION_TTL_HOURS: '0',
        SERVICE_SMTP_URL: 'http://user:secret@mail.test',
      });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = err!.message;
    for (const v of ['SERVICE_RESERVED_SLUGS', 'SERVICE_SLUG_RETIREMENT_DAYS', 'SERVICE_INVITATION_TTL_HOURS', 'SERVICE_SMTP_URL']) expect(msg).toContain(v);
    expect(msg).not.toContain('secret');
    expect(() => loadConfig({ SERVICE_SMTP_URL: 'smtp://127.0.0.1:2525' })).toThrow(/SERVICE_MAIL_FROM: required/);
    expect(() => loadConfig({ SERVICE_MAIL_FROM: 'not an address' })).toThrow(/SERVICE_MAIL_FROM/);
  });

  it('SERVICE_DATABASE_QUERY_TIMEOUT_MS: 5 s by default, an integer of milliseconds from 100', () => {
    expect(loadConfig({}).databaseQueryTimeoutMs).toBe(5_000);
    expect(loadConfig({ SERVICE_DATABASE_QUERY_TIMEOUT_MS: '2500' }).databaseQueryTimeoutMs).toBe(2_500);
    for (const bad of ['0', '99', '5s', '-1', '600001']) {
      expect(() => loadConfig({ SERVICE_DATABASE_QUERY_TIMEOUT_MS: bad })).toThrow(/SERVICE_DATABASE_QUERY_TIMEOUT_MS: expected an integer from 100 to 600000/);
    }
  });
});

describe('SERVICE_ADMIN_ISSUER (docs/security.md#platform-admins)', () => {
  const JWKS = { SERVICE_JWKS_URI: 'https://idp.example/jwks.json' };
  it('defaults: SERVICE_JWT_ISSUER, else the local or OIDC issuer; jwt and jwks alone assume none', () => {
    expect(loadConfig({}).adminIssuers).toEqual(['urn:tenant-service:local']);
    expect(loadConfig({ SERVICE_OIDC_ISSUER: 'https://login.example/' }).adminIssuers).toEqual(['https://login.example/']);
    expect(loadConfig({ ...JWKS, SERVICE_JWT_ISSUER: 'https://a.example' }).adminIssuers).toEqual(['https://a.example']);
    expect(loadConfig(JWKS).adminIssuers).toEqual([]);
    expect(loadConfig({ SERVICE_JWT_SECRET: 'x'.repeat(32) }).adminIssuers).toEqual([]);
  });
  it('a comma list or a JSON array, trimmed and deduplicated, replaces the default', () => {
    expect(loadConfig({ ...JWKS, SERVICE_ADMIN_ISSUER: ' https://a.example , https://b.example,https://a.example' }).adminIssuers).toEqual(['https://a.example', 'https://b.example']);
    expect(loadConfig({ SERVICE_ADMIN_ISSUER: '["https://a.example"]' }).adminIssuers).toEqual(['https://a.example']);
  });
  it('bad values are reported with the other variables', () => {
    for (const bad of [',', '[1]', '[not json', 'https://a.example,with space', `https://a.example/${'x'.repeat(1100)}`]) {
      let err: unknown;
      try {
        loadConfig({ SERVICE_ADMIN_ISSUER: bad, SERVICE_PORT: 'x' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems.map((p) => p.split(':')[0])).toEqual(['SERVICE_PORT', 'SERVICE_ADMIN_ISSUER']);
    }
  });
});
