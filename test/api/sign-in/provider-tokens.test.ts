/**
 * The provider's tokens over time (docs/sign-in.md#tokens-it-issues): refresh tokens rotate and
 * answer the membership of the moment; the service accepts the access tokens as bearer tokens on
 * its operations and in the gateway decision, resolving the tenant by `tenant_id`.
 */
import { adminToken, createTenant, createUser, ownerConnection } from '../../helpers/factories';
import { createAccount, discover, openidClient, payloadOf, registerClient, signIn, useProviderApp } from './provider-harness';

const p = useProviderApp();


/** A member (role `role`) of a new tenant, signed in through a new public client. */
async function signedInMember(role: 'admin' | 'member' = 'member') {
  const tenant = await createTenant();
  const account = await createAccount();
  const member = await createUser(tenant.id, { issuer: p.issuer, subject: account.id, email: account.email, role });
  const { clientId, redirectUri } = await registerClient(p);
  const config = await discover(p, clientId);
  const { tokens } = await signIn(p, config, redirectUri, { accountId: account.id, tenantId: tenant.id, method: 'email', connectionId: null });
  return { tenant, account, member, config, tokens };
}

function api(path: string, token: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${p.base}${path}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
}

async function removeMember(tenantSlug: string, userId: string): Promise<void> {
  const res = await fetch(`${p.base}/api/tenant/members/${userId}`, { method: 'DELETE', headers: { authorization: `Bearer ${adminToken()}`, 'x-tenant': tenantSlug } });
  expect(res.status).toBe(204);
}

describe('refresh tokens', () => {
  it('rotate: the new one works, the old one is invalid_grant (and ends the chain)', async () => {
    const oidc = await openidClient();
    const { config, tokens } = await signedInMember();
    const first = tokens.refresh_token!;
    const second = await oidc.refreshTokenGrant(config, first);
    expect(second.refresh_token).toEqual(expect.any(String));
    expect(second.refresh_token).not.toBe(first);
    expect(payloadOf(second.access_token).tenant_role).toBe('member');
    await expect(oidc.refreshTokenGrant(config, first)).rejects.toMatchObject({ error: 'invalid_grant' });
    // A replayed refresh token revokes its grant: the rotated one dies with it.
    await expect(oidc.refreshTokenGrant(config, second.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('answer the role and permissions of the moment', async () => {
    const oidc = await openidClient();
    const { tenant, member, config, tokens } = await signedInMember('member');
    const res = await fetch(`${p.base}/api/tenant/members/${member.id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${adminToken()}`, 'x-tenant': tenant.slug, 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'admin' }),
    });
    expect(res.status).toBe(200);
    const next = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    const claims = payloadOf(next.access_token);
    expect(claims.tenant_role).toBe('admin');
    expect(claims.permissions).toEqual([...(claims.permissions as string[])].sort());
    expect(claims.permissions).not.toEqual(payloadOf(tokens.access_token).permissions);
    expect(next.claims()!.tenant_role).toBe('admin');
  });

  it('of a removed member are invalid_grant', async () => {
    const oidc = await openidClient();
    const { tenant, member, config, tokens } = await signedInMember();
    await removeMember(tenant.slug, member.id);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('of a member the directory deactivated are invalid_grant, and their access token is refused', async () => {
    const oidc = await openidClient();
    const { tenant, member, config, tokens } = await signedInMember();
    await ownerConnection()('directory_users').insert({ tenant_id: tenant.id, user_name: member.email, user_name_key: member.email, active: false, user_id: member.id });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await api('/api/tenant', tokens.access_token)).status).toBe(403);
  });

  it('of a member of a suspended tenant are invalid_grant', async () => {
    const oidc = await openidClient();
    const { tenant, config, tokens } = await signedInMember();
    const res = await fetch(`${p.base}/api/setup/tenant/${tenant.id}/suspend`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'unpaid' }),
    });
    expect(res.status).toBe(200);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe('access tokens as bearer tokens of the service', () => {
  it('GET /api/tenant answers the tenant of tenant_id, without X-Tenant', async () => {
    const { tenant, account, tokens } = await signedInMember('admin');
    const res = await api('/api/tenant', tokens.access_token);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tenant: { tenant_id: string; slug: string }; membership: { role: string; subject: string; issuer: string }; source: string };
    expect(body.tenant).toEqual(expect.objectContaining({ tenant_id: tenant.id, slug: tenant.slug }));
    expect(body.membership).toEqual(expect.objectContaining({ role: 'admin', subject: account.id, issuer: p.issuer }));
    expect(body.source).toBe('tenant_id_claim');
  });

  it('pass the gateway decision', async () => {
    const { tokens } = await signedInMember();
    const res = await api('/api/tenant/decision', tokens.access_token);
    expect(res.status).toBe(200);
  });

  it('a tampered token is 401', async () => {
    const { tokens } = await signedInMember();
    const [h, body, sig] = tokens.access_token.split('.');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, tenant_role: 'admin' })).toString('base64url')}.${sig}`;
    expect((await api('/api/tenant', forged)).status).toBe(401);
    expect((await api('/api/tenant/decision', forged)).status).toBe(401);
  });

  it('an ID token is not a bearer token (another audience)', async () => {
    const { tokens } = await signedInMember();
    expect((await api('/api/tenant', tokens.id_token!)).status).toBe(401);
  });

  it('an X-Tenant naming another tenant is refused', async () => {
    const { tokens } = await signedInMember();
    const other = await createTenant();
    expect((await api('/api/tenant', tokens.access_token, { 'x-tenant': other.slug })).status).toBe(403);
  });

  it("a removed member's token is refused like any removed member's", async () => {
    const { tenant, member, tokens } = await signedInMember();
    await removeMember(tenant.slug, member.id);
    const res = await api('/api/tenant', tokens.access_token);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { detail: string }).detail).toContain('removed');
    expect((await api('/api/tenant/decision', tokens.access_token)).status).toBe(403);
  });
});
