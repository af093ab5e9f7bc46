/**
 * Sign-in through a tenant's OIDC connection (docs/sso.md#oidc), against real identity
 * providers: oidc-provider in-process (the whole browser round trip) and a provider whose ID
 * tokens the test writes (for the tokens the service must refuse). The SignInCompleter is the
 * harness's recorder (test/api/sso/helpers/harness.ts); discovery, the redirect, the code
 * exchange and the ID token checks are the service's.
 */
import request from 'supertest';
import { createSso } from '../../../src/sso';
import { closeOwnerConnection, ownerConnection } from '../../helpers/factories';
import { startCraftedIdp, type CraftedIdp } from './helpers/crafted-idp';
import { Browser, startLocation, startSsoHarness, tenantAdmin, type SsoHarness } from './helpers/harness';
import { startUpstreamOidc, type UpstreamOidc } from './helpers/upstream-oidc';

let h: SsoHarness;
let up: UpstreamOidc;
let crafted: CraftedIdp;
let tenant: { id: string; auth: string };
let realConnection: string;
let craftedConnection: string;

beforeAll(async () => {
  h = await startSsoHarness();
  up = await startUpstreamOidc(`${h.base}/sso/oidc/callback`);
  crafted = await startCraftedIdp('crafted-client');
  tenant = await tenantAdmin(h.t);
  const create = (body: object) => request(h.t.app).post('/api/tenant/sso/connections').set('Authorization', tenant.auth).send(body).expect(201);
  realConnection = (await create({ type: 'oidc', name: 'Upstream', issuer: up.issuer, client_id: up.clientId, client_secret: up.clientSecret })).body.connection_id;
  craftedConnection = (await create({ type: 'oidc', name: 'Crafted', issuer: crafted.issuer, client_id: 'crafted-client', client_secret: 'crafted-secret' })).body.connection_id;
});
afterAll(async () => {
  await h.close();
  await up.close();
  await crafted.close();
  await closeOwnerConnection();
});

let n = 0;
const interaction = () => `interaction-${++n}`;
const lastFailure = () => h.recorded.failed.at(-1)!;

describe('the round trip through a real identity provider', () => {
  it('start → IdP → callback: the completer receives the identity (email lower-cased, verified), for the interaction; PKCE S256, state, nonce, login_hint sent', async () => {
    const uid = interaction();
    const location = new URL(await startLocation(h.base, realConnection, uid, 'ann@acme.test'));
    expect(location.origin).toBe(up.issuer);
    const q = location.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('redirect_uri')).toBe(`${h.base}/sso/oidc/callback`);
    expect(q.get('scope')).toBe('openid email profile');
    expect(q.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(q.get('nonce')).toMatch(/^[\w-]{20,}$/);
    const b = new Browser();
    const res = await b.fetch(location.href);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ completed: uid });
    expect(up.lastLoginHint).toBe('ann@acme.test');
    expect(h.recorded.completed.at(-1)).toEqual({
      interactionUid: uid,
      identity: { connectionId: realConnection, tenantId: tenant.id, protocol: 'oidc', issuer: up.issuer, subject: 'upstream-1', email: 'ann@acme.test', emailVerified: true, name: 'Ann' },
    });
    // The same callback again: the state was used.
    const callback = b.hops.find((u) => u.startsWith(`${h.base}/sso/oidc/callback`))!;
    const again = await fetch(callback, { redirect: 'manual' });
    expect(again.status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: uid, failure: { reason: 'state_used', connectionId: realConnection, tenantId: tenant.id } });
  });

  it('an unknown state, a wrong code, an expired state, a nonce that is not the one sent: each refused with its reason', async () => {
    expect((await fetch(`${h.base}/sso/oidc/callback?state=${'x'.repeat(43)}&code=abc`)).status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: null, failure: { reason: 'state_unknown', connectionId: null } });
    expect((await fetch(`${h.base}/sso/oidc/callback`)).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('state_unknown');

    const uid = interaction();
    const state = new URL(await startLocation(h.base, realConnection, uid)).searchParams.get('state')!;
    expect((await fetch(`${h.base}/sso/oidc/callback?code=not-a-code&state=${state}&iss=${encodeURIComponent(up.issuer)}`)).status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: uid, failure: { reason: 'oidc_token_error' } });
    expect(lastFailure().failure.detail).toContain('invalid_grant');

    const late = new URL(await startLocation(h.base, realConnection, interaction()));
    await ownerConnection()('sso_requests').where({ id: late.searchParams.get('state') }).update({ expires_at: new Date(Date.now() - 1000) });
    expect((await new Browser().fetch(late.href)).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('state_expired');

    const swapped = new URL(await startLocation(h.base, realConnection, interaction()));
    await ownerConnection()('sso_requests').where({ id: swapped.searchParams.get('state') }).update({ nonce: 'a-nonce-this-service-never-sent' });
    expect((await new Browser().fetch(swapped.href)).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('oidc_nonce_mismatch');
  });

  it('an inactive connection sends nobody anywhere', async () => {
    await request(h.t.app).patch(`/api/tenant/sso/connections/${realConnection}`).set('Authorization', tenant.auth).send({ status: 'inactive' }).expect(200);
    const uid = interaction();
    const res = await fetch(`${h.base}/test/start?connection=${realConnection}&interaction=${uid}`, { redirect: 'manual' });
    expect(res.status).toBe(400); // the completer's failure page
    expect(lastFailure()).toMatchObject({ interactionUid: uid, failure: { reason: 'connection_inactive', connectionId: realConnection, tenantId: tenant.id } });
    expect((await fetch(`${h.base}/test/start?connection=00000000-0000-4000-8000-000000000000&interaction=x`, { redirect: 'manual' })).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('connection_unknown');
    await request(h.t.app).patch(`/api/tenant/sso/connections/${realConnection}`).set('Authorization', tenant.auth).send({ status: 'active' }).expect(200);
  });
});

describe('tenantSso', () => {
  it('sso_required and the oldest active connection, for the sign-in pages', async () => {
    const sso = createSso(h.t.config, h.t.services);
    expect(await sso.connector.tenantSso(tenant.id)).toEqual({ ssoRequired: false, connection: { connectionId: realConnection, type: 'oidc' } });
    await request(h.t.app).patch(`/api/tenant/sso/connections/${realConnection}`).set('Authorization', tenant.auth).send({ status: 'inactive' }).expect(200);
    await request(h.t.app).patch('/api/tenant/sso').set('Authorization', tenant.auth).send({ sso_required: true }).expect(200);
    expect(await sso.connector.tenantSso(tenant.id)).toEqual({ ssoRequired: true, connection: { connectionId: craftedConnection, type: 'oidc' } });
    await request(h.t.app).patch('/api/tenant/sso').set('Authorization', tenant.auth).send({ sso_required: false }).expect(200);
    await request(h.t.app).patch(`/api/tenant/sso/connections/${realConnection}`).set('Authorization', tenant.auth).send({ status: 'active' }).expect(200);
  });
});

describe('ID tokens the service must refuse', () => {
  /** Starts a sign-in at the crafted provider, prepares its ID token from the nonce sent, and calls back. */
  async function signInWith(claims: (nonce: string) => Promise<string>): Promise<{ status: number; uid: string }> {
    const uid = interaction();
    const q = new URL(await startLocation(h.base, craftedConnection, uid)).searchParams;
    crafted.nextIdToken = await claims(q.get('nonce')!);
    const res = await fetch(`${h.base}/sso/oidc/callback?code=the-code&state=${q.get('state')}`, { redirect: 'manual' });
    return { status: res.status, uid };
  }

  it('a well-made token is accepted (the client authenticated with its opened secret and the PKCE verifier)', async () => {
    const r = await signInWith((nonce) => crafted.sign({ sub: 'c-1', nonce, email: 'Bob@Acme.test', email_verified: false }));
    expect(r.status).toBe(200);
    expect(h.recorded.completed.at(-1)!.identity).toMatchObject({ issuer: crafted.issuer, subject: 'c-1', email: 'bob@acme.test', emailVerified: false, connectionId: craftedConnection });
    const tr = crafted.tokenRequests.at(-1)!;
    // client_secret_basic: id and secret form-encoded, then base64 (as OAuth 2.0 defines it).
    const [id, secret] = Buffer.from(tr.authorization!.replace(/^Basic /, ''), 'base64').toString('utf8').split(':').map(decodeURIComponent);
    expect([id, secret]).toEqual(['crafted-client', 'crafted-secret']);
    expect(tr.body.get('code_verifier')).toMatch(/^[\w-]{43,}$/);
    expect(tr.body.get('redirect_uri')).toBe(`${h.base}/sso/oidc/callback`);
  });

  it.each([
    ['another issuer', 'oidc_issuer_mismatch', (nonce: string) => crafted.sign({ sub: 'c-1', nonce, iss: 'https://other-idp.example.com' })],
    ['another audience', 'oidc_audience_mismatch', (nonce: string) => crafted.sign({ sub: 'c-1', nonce, aud: 'some-other-client' })],
    ['an expired token', 'oidc_id_token_expired', (nonce: string) => crafted.sign({ sub: 'c-1', nonce, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })],
    ['a signature by another key', 'oidc_signature_invalid', (nonce: string) => crafted.sign({ sub: 'c-1', nonce }, crafted.otherKey())],
    ['another nonce', 'oidc_nonce_mismatch', () => crafted.sign({ sub: 'c-1', nonce: 'not-the-nonce' })],
    ['no nonce', 'oidc_nonce_mismatch', () => crafted.sign({ sub: 'c-1' })],
  ])('%s: refused (%s), never a 500', async (_what, reason, make) => {
    const before = h.recorded.completed.length;
    const r = await signInWith(make);
    expect(r.status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: r.uid, failure: { reason, connectionId: craftedConnection, tenantId: tenant.id } });
    expect(h.recorded.completed.length).toBe(before);
  });

  it('the token endpoint refusing the code: oidc_token_error with its error, not a 500', async () => {
    const uid = interaction();
    const q = new URL(await startLocation(h.base, craftedConnection, uid)).searchParams;
    crafted.nextIdToken = null; // the token endpoint answers 400 invalid_grant
    expect((await fetch(`${h.base}/sso/oidc/callback?code=x&state=${q.get('state')}`)).status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: uid, failure: { reason: 'oidc_token_error' } });
  });
});
