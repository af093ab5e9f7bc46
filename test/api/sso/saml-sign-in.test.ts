/**
 * Sign-in through a tenant's SAML connection (docs/sso.md#saml), against a SAML identity
 * provider built with samlify: the AuthnRequest by redirect, good signed responses (Response or
 * Assertion), and every response the service must refuse — unsigned, signed by another key,
 * another audience, recipient or destination, an unknown or missing InResponseTo, expired, a
 * replayed assertion ID, wrapped assertions — each to failFederated with its own reason, none a
 * 500.
 */
import request from 'supertest';
import { closeOwnerConnection, ownerConnection } from '../../helpers/factories';
import { makeKeyAndCert } from './helpers/certs';
import { startSsoHarness, startLocation, tenantAdmin, type SsoHarness } from './helpers/harness';
import { PERSISTENT_FORMAT, requestIdOf, startSamlIdp, type ResponseOptions, type SamlIdp } from './helpers/saml-idp';

let h: SsoHarness;
let idp: SamlIdp;
let impostor: SamlIdp;
let tenant: { id: string; auth: string };
let connection: { connection_id: string; sp_entity_id: string; acs_url: string };

beforeAll(async () => {
  h = await startSsoHarness();
  idp = startSamlIdp(makeKeyAndCert('idp'));
  impostor = startSamlIdp(makeKeyAndCert('impostor'), idp.entityId);
  tenant = await tenantAdmin(h.t);
  connection = (
    await request(h.t.app)
      .post('/api/tenant/sso/connections')
      .set('Authorization', tenant.auth)
      .send({ type: 'saml', name: 'IdP', idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_certificate: idp.keyCert.cert })
      .expect(201)
  ).body;
});
afterAll(async () => {
  await h.close();
  await closeOwnerConnection();
});

let n = 0;
/** Starts a sign-in: its interaction and the AuthnRequest's ID. */
async function start(): Promise<{ uid: string; requestId: string; location: string }> {
  const uid = `saml-interaction-${++n}`;
  const location = await startLocation(h.base, connection.connection_id, uid);
  return { uid, requestId: requestIdOf(location), location };
}
const post = (samlResponse: string, acs = connection.acs_url) => fetch(acs, { method: 'POST', body: new URLSearchParams({ SAMLResponse: samlResponse }), redirect: 'manual' });
const opts = (requestId: string | null, more: Partial<ResponseOptions> = {}): ResponseOptions => ({ spEntityId: connection.sp_entity_id, acsUrl: connection.acs_url, requestId, ...more });
const lastFailure = () => h.recorded.failed.at(-1)!;

describe('good responses', () => {
  it('the AuthnRequest goes by redirect to the IdP, naming the SP and the ACS; a signed Response completes with the NameID email', async () => {
    const s = await start();
    const loc = new URL(s.location);
    expect(`${loc.origin}${loc.pathname}`).toBe(idp.ssoUrl);
    const res = await post(await idp.respond(opts(s.requestId)));
    expect(res.status).toBe(200);
    expect(h.recorded.completed.at(-1)).toEqual({
      interactionUid: s.uid,
      identity: { connectionId: connection.connection_id, tenantId: tenant.id, protocol: 'saml', issuer: idp.entityId, subject: 'Pat@Acme.test', email: 'pat@acme.test', emailVerified: true, name: null },
    });
    // The same response again: its request was answered.
    expect((await post(await idp.respond(opts(s.requestId)))).status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: s.uid, failure: { reason: 'saml_request_used' } });
  });

  it('only the Assertion signed, a persistent NameID and the email in the emailaddress claim attribute', async () => {
    const s = await start();
    const r = await idp.respond(opts(s.requestId, { sign: 'assertion', nameId: 'opaque-123', nameIdFormat: PERSISTENT_FORMAT, attributes: { 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress': 'Zed@Acme.test' } }));
    expect((await post(r)).status).toBe(200);
    expect(h.recorded.completed.at(-1)!.identity).toMatchObject({ subject: 'opaque-123', email: 'zed@acme.test' });
  });

  it('NotOnOrAfter 30 s ago is within the 60 s skew', async () => {
    const s = await start();
    const past = new Date(Date.now() - 30_000).toISOString();
    expect((await post(await idp.respond(opts(s.requestId, { values: { ConditionsNotOnOrAfter: past, SubjectConfirmationDataNotOnOrAfter: past } })))).status).toBe(200);
  });
});

describe('responses refused, each with its reason', () => {
  const longAgo = new Date(Date.now() - 10 * 60_000).toISOString();
  it.each<[string, string, (s: { requestId: string }) => Promise<string> | string]>([
    ['unsigned', 'saml_unsigned', (s) => idp.unsigned(opts(s.requestId))],
    ['signed by another key', 'saml_signature_invalid', (s) => impostor.respond(opts(s.requestId))],
    ['assertion signed by another key', 'saml_signature_invalid', (s) => impostor.respond(opts(s.requestId, { sign: 'assertion' }))],
    ['another audience', 'saml_audience_mismatch', (s) => idp.respond(opts(s.requestId, { values: { Audience: 'https://other-sp.example.com' } }))],
    ['another recipient', 'saml_recipient_mismatch', (s) => idp.respond(opts(s.requestId, { values: { SubjectRecipient: 'https://other-sp.example.com/acs' } }))],
    ['another destination', 'saml_destination_mismatch', (s) => idp.respond(opts(s.requestId, { values: { Destination: 'https://other-sp.example.com/acs' } }))],
    ['an InResponseTo this service never sent', 'saml_request_unknown', () => idp.respond(opts('_never-sent-0123456789abcdef'))],
    ['no InResponseTo (IdP-initiated)', 'saml_in_response_to_missing', () => idp.respond(opts(null))],
    ['a SubjectConfirmation InResponseTo other than the Response\'s', 'saml_in_response_to_invalid', (s) => idp.respond(opts(s.requestId, { subjectInResponseTo: '_another-request-0123456789' }))],
    ['expired (10 minutes ago)', 'saml_assertion_expired', (s) => idp.respond(opts(s.requestId, { values: { ConditionsNotOnOrAfter: longAgo, SubjectConfirmationDataNotOnOrAfter: longAgo } }))],
    ['not yet valid (in 10 minutes)', 'saml_assertion_not_yet_valid', (s) => idp.respond(opts(s.requestId, { values: { ConditionsNotBefore: new Date(Date.now() + 10 * 60_000).toISOString() } }))],
    ['not base64 XML', 'saml_response_malformed', () => Buffer.from('<html>hello</html>').toString('base64')],
  ])('%s: %s', async (_what, reason, make) => {
    const s = await start();
    const before = h.recorded.completed.length;
    const res = await post(await make(s));
    expect(res.status).toBe(400);
    expect(lastFailure().failure).toMatchObject({ reason });
    expect(h.recorded.completed.length).toBe(before);
  });

  it('a replayed assertion ID (in a response to another request) is refused', async () => {
    const first = await start();
    const assertionId = `_replayed-${Date.now()}`;
    expect((await post(await idp.respond(opts(first.requestId, { values: { AssertionID: assertionId } })))).status).toBe(200);
    const second = await start();
    expect((await post(await idp.respond(opts(second.requestId, { values: { AssertionID: assertionId } })))).status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: second.uid, failure: { reason: 'saml_assertion_replayed', connectionId: connection.connection_id } });
    const row = await ownerConnection()('sso_consumed_assertions').where({ assertion_id: assertionId }).first();
    expect(new Date(row.expires_at).getTime()).toBeGreaterThan(Date.now());
  });

  it('wrapping: a second, unsigned assertion beside the signed one; the signed one moved inside a forged one', async () => {
    const s1 = await start();
    const signed = Buffer.from(await idp.respond(opts(s1.requestId, { sign: 'assertion' })), 'base64').toString('utf8');
    const assertion = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed)![0];
    const evil = assertion
      .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
      .replace(/ID="[^"]+"/, 'ID="_evil"')
      .replace(/>Pat@Acme.test</, '>mallory@evil.test<');
    const before = h.recorded.completed.length;
    const beside = signed.replace(assertion, `${evil}${assertion}`);
    expect((await post(Buffer.from(beside).toString('base64'))).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('saml_assertion_wrapped');

    const s2 = await start();
    const signed2 = Buffer.from(await idp.respond(opts(s2.requestId, { sign: 'assertion' })), 'base64').toString('utf8');
    const original = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(signed2)![0];
    const forged = original
      .replace(/<ds:Signature[\s\S]*<\/ds:Signature>/, '')
      .replace(/ID="[^"]+"/, 'ID="_evil2"')
      .replace(/>Pat@Acme.test</, '>mallory@evil.test<')
      .replace('</saml:Subject>', `</saml:Subject><saml:Advice>${original}</saml:Advice>`);
    expect((await post(Buffer.from(signed2.replace(original, forged)).toString('base64'))).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('saml_signature_invalid');
    expect(h.recorded.completed.length).toBe(before);
    expect(h.recorded.completed.some((c) => c.identity.email === 'mallory@evil.test')).toBe(false);
  });

  it('no SAMLResponse, a connection that does not exist, a malformed body: refused, never a 500', async () => {
    expect((await fetch(connection.acs_url, { method: 'POST', body: new URLSearchParams({}) })).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('saml_response_missing');
    const s = await start();
    const r = await idp.respond(opts(s.requestId));
    expect((await post(r, `${h.base}/sso/saml/00000000-0000-4000-8000-000000000000/acs`)).status).toBe(400);
    expect(lastFailure().failure.reason).toBe('saml_request_unknown');
    expect((await post(r, `${h.base}/sso/saml/not-a-uuid/acs`)).status).toBe(400);
    const big = await fetch(connection.acs_url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `SAMLResponse=${'A'.repeat(2 * 1024 * 1024)}` });
    expect(big.status).toBe(400);
  });
});

describe('deleting a connection', () => {
  it('takes its sign-ins in flight and remembered assertion IDs with it; a response then names no request', async () => {
    const done = await start();
    expect((await post(await idp.respond(opts(done.requestId)))).status).toBe(200);
    const s = await start();
    const consumed = await ownerConnection()('sso_consumed_assertions').where({ connection_id: connection.connection_id }).count<{ n: string }[]>({ n: '*' });
    expect(Number(consumed[0]!.n)).toBeGreaterThan(0);
    await request(h.t.app).delete(`/api/tenant/sso/connections/${connection.connection_id}`).set('Authorization', tenant.auth).expect(204);
    expect(await ownerConnection()('sso_requests').where({ connection_id: connection.connection_id }).first()).toBeUndefined();
    expect(await ownerConnection()('sso_consumed_assertions').where({ connection_id: connection.connection_id }).first()).toBeUndefined();
    expect((await post(await idp.respond(opts(s.requestId)))).status).toBe(400);
    expect(lastFailure()).toMatchObject({ interactionUid: null, failure: { reason: 'saml_request_unknown' } });
    expect((await fetch(connection.sp_entity_id + '/metadata')).status).toBe(404);
  });
});
