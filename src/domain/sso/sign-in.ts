/**
 * A sign-in through a tenant's connection (docs/sso.md#how-a-sign-in-goes): `start` remembers a
 * one-time request (10 minutes) and answers the identity provider's URL; the callbacks use that
 * request once, run every check of the protocol and answer the `UpstreamIdentity`, or throw a
 * `SsoFailure` carrying a reason code and a sentence for the tenant admin (never a secret).
 */
import type { FederatedFailure, SignInHandoff, TenantSso, UpstreamIdentity } from '../../context/sign-in';
import type { SsoRequest, StoredSsoConnection } from '../../context/records';
import { selectConnectionOfAnyTenant, selectTenantSsoNow } from '../../db/queries/sso-connections';
import { consumeAssertion, insertSsoRequest, useSsoRequest } from '../../db/queries/sso-requests';
import type { Database } from '../../db/tenant-scope';
import { oidcRedirectUri, openClientSecret, publicBase, samlEntityId, type SsoSettings } from './connections';
import { authorizationRequest, describeOidcError, exchangeCode, type OidcConnectionConfig } from './oidc';
import { authnRequest, peekResponse, SamlRefusal, validateResponse, type SamlConnectionConfig } from './saml';

export const REQUEST_TTL_SECONDS = 600;

/** Why a sign-in failed, and the interaction it belonged to when known. */
export class SsoFailure extends Error {
  constructor(
    readonly failure: FederatedFailure,
    readonly interactionUid: string | null,
  ) {
    super(failure.detail);
    this.name = 'SsoFailure';
  }
}

const fail = (reason: string, detail: string, where: { connectionId?: string | null; tenantId?: string | null; interactionUid?: string | null } = {}) =>
  new SsoFailure({ reason, detail, connectionId: where.connectionId ?? null, tenantId: where.tenantId ?? null }, where.interactionUid ?? null);

const policyOf = (s: SsoSettings) => ({ allowPrivateNetworks: s.ssoAllowPrivateNetworks });

function oidcConfig(settings: SsoSettings, c: StoredSsoConnection): OidcConnectionConfig {
  return { connectionId: c.id, version: c.updatedAt.toISOString(), issuer: c.oidcIssuer!, clientId: c.oidcClientId!, clientSecret: openClientSecret(settings, c) };
}

export function samlConfig(settings: SsoSettings, c: StoredSsoConnection): SamlConnectionConfig {
  const sp = samlEntityId(publicBase(settings), c.id);
  return { spEntityId: sp, acsUrl: `${sp}/acs`, idpEntityId: c.samlIdpEntityId!, idpSsoUrl: c.samlIdpSsoUrl!, idpCertificate: c.samlIdpCertificate! };
}

/** `sso_required` and the oldest active connection: one statement. */
export async function tenantSso(db: Database, tenantId: string): Promise<TenantSso> {
  const s = await selectTenantSsoNow(db, tenantId);
  return { ssoRequired: s.ssoRequired, connection: s.connection && { connectionId: s.connection.id, type: s.connection.type } };
}

/** A connection of any tenant (active or not), or null; `connectionId` must be a UUID (else null). */
export async function anyConnection(db: Database, connectionId: string): Promise<StoredSsoConnection | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(connectionId)) return null;
  return selectConnectionOfAnyTenant(db, connectionId);
}

/** An active connection of any tenant, or the failure. */
export async function activeConnection(db: Database, connectionId: string, interactionUid: string | null): Promise<StoredSsoConnection> {
  const c = await anyConnection(db, connectionId);
  if (!c) throw fail('connection_unknown', `There is no SSO connection '${connectionId.slice(0, 100)}'.`, { interactionUid });
  if (c.status !== 'active') throw fail('connection_inactive', `The SSO connection '${c.name}' is inactive.`, { connectionId: c.id, tenantId: c.tenantId, interactionUid });
  return c;
}

/**
 * How a sign-in waits for the tenant's identity provider: the web layer gives the request's
 * sign-in slot back meanwhile (docs/operations.md#sign-ins-beside-decisions).
 */
export type WhileAway = <T>(work: () => Promise<T>) => Promise<T>;

/** The URL to send the person to (303), after remembering the request. */
export async function startSignIn(db: Database, settings: SsoSettings, connectionId: string, handoff: SignInHandoff, whileAway: WhileAway): Promise<string> {
  const c = await activeConnection(db, connectionId, handoff.interactionUid);
  const where = { connectionId: c.id, tenantId: c.tenantId, interactionUid: handoff.interactionUid };
  let request: { id: string; codeVerifier?: string; nonce?: string; url: string };
  try {
    if (c.type === 'oidc') {
      const a = await whileAway(() => authorizationRequest(oidcConfig(settings, c), policyOf(settings), { redirectUri: oidcRedirectUri(publicBase(settings)), scopes: c.oidcScopes ?? ['openid'], loginHint: handoff.loginHint }));
      request = { id: a.state, codeVerifier: a.codeVerifier, nonce: a.nonce, url: a.url.href };
    } else {
      const a = await authnRequest(samlConfig(settings, c));
      request = { id: a.requestId, url: a.url };
    }
  } catch (err) {
    throw fail(c.type === 'oidc' ? 'oidc_discovery_failed' : 'saml_request_failed', describeOidcError(err), where);
  }
  await insertSsoRequest(
    db,
    { id: request.id, kind: c.type, tenantId: c.tenantId, connectionId: c.id, interactionUid: handoff.interactionUid, codeVerifier: request.codeVerifier, nonce: request.nonce, ttlSeconds: REQUEST_TTL_SECONDS },
    Math.random() < 0.02 ? 200 : undefined,
  );
  return request.url;
}

/** Uses the request `id` once; the failure names why it cannot be used. */
async function useRequest(db: Database, id: string, kind: 'oidc' | 'saml'): Promise<SsoRequest> {
  const prefix = kind === 'oidc' ? 'state' : 'saml_request';
  const r = await useSsoRequest(db, id, kind);
  if (!r) throw fail(`${prefix}_unknown`, kind === 'oidc' ? 'The callback carries a state this service did not issue (or it was forgotten).' : 'InResponseTo names no AuthnRequest this service sent.');
  const where = { connectionId: r.connectionId, tenantId: r.tenantId, interactionUid: r.interactionUid };
  if (r.usedAt) throw fail(`${prefix}_used`, kind === 'oidc' ? 'The state was already used: a callback is accepted once.' : 'A response to this AuthnRequest was already accepted: a request is answered once.', where);
  if (r.expired) throw fail(`${prefix}_expired`, `The sign-in was started more than ${REQUEST_TTL_SECONDS / 60} minutes ago.`, where);
  return r;
}

/** Reason codes of openid-client's refusals (docs/sso.md#when-a-sign-in-fails), from its error code and message. */
function oidcReason(err: unknown): string {
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  if (e?.name === 'SsoNetworkError' || (e?.cause as { name?: string } | undefined)?.name === 'SsoNetworkError') return 'oidc_network_error';
  const code = e?.code ?? e?.cause?.code;
  if (code === 'OAUTH_AUTHORIZATION_RESPONSE_ERROR') return 'oidc_idp_error';
  if (code === 'OAUTH_RESPONSE_BODY_ERROR') return 'oidc_token_error';
  const m = describeOidcError(err);
  const table: Array<[RegExp, string]> = [
    [/"nonce"/, 'oidc_nonce_mismatch'],
    [/"iss"/, 'oidc_issuer_mismatch'],
    [/"aud"|"azp"/, 'oidc_audience_mismatch'],
    [/"exp"|"iat"|"nbf"|timestamp/, 'oidc_id_token_expired'],
    [/signature|key/i, 'oidc_signature_invalid'],
    [/"state"/, 'state_mismatch'],
  ];
  return table.find(([re]) => re.test(m))?.[1] ?? 'oidc_id_token_invalid';
}

/** The OIDC callback (`callbackUrl`: the URL it was called with, on SERVICE_PUBLIC_URL). */
export async function finishOidc(db: Database, settings: SsoSettings, callbackUrl: URL, whileAway: WhileAway): Promise<{ interactionUid: string; identity: UpstreamIdentity }> {
  const state = callbackUrl.searchParams.get('state');
  if (!state || state.length < 20 || state.length > 200) throw fail('state_unknown', 'The callback carries no state this service issued.');
  const r = await useRequest(db, state, 'oidc');
  const where = { connectionId: r.connectionId, tenantId: r.tenantId, interactionUid: r.interactionUid };
  const c = await activeConnection(db, r.connectionId, r.interactionUid);
  let claims;
  try {
    claims = await whileAway(() => exchangeCode(oidcConfig(settings, c), policyOf(settings), callbackUrl, { state, nonce: r.nonce!, codeVerifier: r.codeVerifier! }));
  } catch (err) {
    throw fail(oidcReason(err), describeOidcError(err), where);
  }
  return {
    interactionUid: r.interactionUid,
    identity: { connectionId: c.id, tenantId: c.tenantId, protocol: 'oidc', issuer: claims.iss, subject: claims.sub, email: claims.email, emailVerified: claims.emailVerified, name: claims.name },
  };
}

/** The SAML ACS of `connectionId`, with the POSTed `SAMLResponse`. */
export async function finishSaml(db: Database, settings: SsoSettings, connectionId: string, samlResponse: string | undefined): Promise<{ interactionUid: string; identity: UpstreamIdentity }> {
  if (typeof samlResponse !== 'string' || samlResponse === '') throw fail('saml_response_missing', 'The POST carries no SAMLResponse.', { connectionId: null });
  let peek;
  try {
    peek = peekResponse(samlResponse);
  } catch (err) {
    const r = err as SamlRefusal;
    throw fail(r.reason, r.message);
  }
  if (!peek.inResponseTo) throw fail('saml_in_response_to_missing', 'The response has no InResponseTo: only responses to an AuthnRequest of this service are accepted (no IdP-initiated sign-in).');
  const r = await useRequest(db, peek.inResponseTo, 'saml');
  const where = { connectionId: r.connectionId, tenantId: r.tenantId, interactionUid: r.interactionUid };
  if (r.connectionId !== connectionId) throw fail('saml_request_unknown', 'InResponseTo names a request of another connection.', where);
  if (!peek.signed) throw fail('saml_unsigned', 'Neither the Response nor its Assertion is signed.', where);
  const c = await activeConnection(db, connectionId, r.interactionUid);
  const config = samlConfig(settings, c);
  if (peek.destination !== null && peek.destination !== config.acsUrl) throw fail('saml_destination_mismatch', `The Response's Destination is '${peek.destination.slice(0, 300)}', expected '${config.acsUrl}'.`, where);
  let a;
  try {
    a = await validateResponse(config, samlResponse, r.id);
  } catch (err) {
    const refusal = err instanceof SamlRefusal ? err : new SamlRefusal('saml_response_invalid', String(err).slice(0, 300));
    throw fail(refusal.reason, refusal.message, where);
  }
  const fresh = await consumeAssertion(db, c.id, a.assertionId, a.keepUntil);
  if (!fresh) throw fail('saml_assertion_replayed', `The assertion '${a.assertionId.slice(0, 100)}' was already accepted once.`, where);
  return {
    interactionUid: r.interactionUid,
    identity: { connectionId: c.id, tenantId: c.tenantId, protocol: 'saml', issuer: a.issuer, subject: a.subject, email: a.email, emailVerified: a.email !== null, name: a.name },
  };
}
