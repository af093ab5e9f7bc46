/**
 * A tenant's SAML identity provider for tests, built with samlify: `IdentityProvider` signs login
 * responses (the Response, the Assertion or both) with its own key and a self-signed certificate.
 * Every value of the response can be overridden (audience, recipient, times, IDs, InResponseTo),
 * and `unsigned` renders the same XML without any signature — the responses the service must
 * refuse. The AuthnRequest ID is read from the redirect the service answered.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import * as samlify from 'samlify';
import type { KeyAndCert } from './certs';

samlify.setSchemaValidator({ validate: async () => 'skipped' });

const POST = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST';
const REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
export const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
export const PERSISTENT_FORMAT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export interface ResponseOptions {
  spEntityId: string;
  acsUrl: string;
  requestId: string | null;
  nameId?: string;
  nameIdFormat?: string;
  /** Attribute name → value, rendered as an AttributeStatement. */
  attributes?: Record<string, string>;
  sign?: 'response' | 'assertion' | 'both';
  /** The SubjectConfirmationData's InResponseTo, when it should differ from the Response's. */
  subjectInResponseTo?: string;
  /** Values of samlify's login response template to replace (Audience, SubjectRecipient, AssertionID, Destination, ConditionsNotOnOrAfter …). */
  values?: Record<string, string>;
}

export interface SamlIdp {
  entityId: string;
  ssoUrl: string;
  keyCert: KeyAndCert;
  /** A signed response (base64, as the HTTP-POST binding carries it). */
  respond(o: ResponseOptions): Promise<string>;
  /** The same XML, signed by nobody (base64). */
  unsigned(o: ResponseOptions): string;
}

function values(idpEntityId: string, o: ResponseOptions): Record<string, string> {
  const now = new Date();
  const later = new Date(now.getTime() + 5 * 60_000).toISOString();
  const attrs = Object.entries(o.attributes ?? {})
    .map(([n, v]) => `<saml:Attribute Name="${esc(n)}"><saml:AttributeValue>${esc(v)}</saml:AttributeValue></saml:Attribute>`)
    .join('');
  const raw: Record<string, string> = {
    ID: `_${crypto.randomBytes(16).toString('hex')}`,
    AssertionID: `_${crypto.randomBytes(16).toString('hex')}`,
    Destination: o.acsUrl,
    Audience: o.spEntityId,
    SubjectRecipient: o.acsUrl,
    Issuer: idpEntityId,
    IssueInstant: now.toISOString(),
    StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
    ConditionsNotBefore: now.toISOString(),
    ConditionsNotOnOrAfter: later,
    SubjectConfirmationDataNotOnOrAfter: later,
    NameIDFormat: o.nameIdFormat ?? EMAIL_FORMAT,
    NameID: o.nameId ?? 'Pat@Acme.test',
    InResponseTo: o.requestId ?? '',
    ...o.values,
  };
  const escaped = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, esc(v)]));
  return { ...escaped, AuthnStatement: `<saml:AuthnStatement AuthnInstant="${raw.IssueInstant}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:Password</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`, AttributeStatement: attrs ? `<saml:AttributeStatement>${attrs}</saml:AttributeStatement>` : '' };
}

function render(idpEntityId: string, o: ResponseOptions): string {
  const template = samlify.SamlLib.defaultLoginResponseTemplate.context;
  const v = values(idpEntityId, o);
  let xml = template.replace(/\{(\w+)\}/g, (_m: string, k: string) => v[k] ?? '');
  if (o.requestId === null) xml = xml.replace(/ InResponseTo=""/g, '');
  if (o.subjectInResponseTo !== undefined) xml = xml.replace(/(<saml:SubjectConfirmationData[^>]*InResponseTo=")[^"]*/, `$1${esc(o.subjectInResponseTo)}`);
  return xml;
}

export function startSamlIdp(keyCert: KeyAndCert, entityId = `https://idp-${crypto.randomBytes(4).toString('hex')}.example.com/saml`): SamlIdp {
  const ssoUrl = `${entityId}/sso`;
  const idp = samlify.IdentityProvider({
    entityID: entityId,
    signingCert: keyCert.cert,
    privateKey: keyCert.key,
    singleSignOnService: [{ Binding: REDIRECT, Location: ssoUrl }],
    nameIDFormat: [EMAIL_FORMAT],
  });
  return {
    entityId,
    ssoUrl,
    keyCert,
    async respond(o) {
      const sign = o.sign ?? 'response';
      const sp = samlify.ServiceProvider({
        entityID: o.spEntityId,
        assertionConsumerService: [{ Binding: POST, Location: o.acsUrl }],
        wantAssertionsSigned: sign !== 'response',
        wantMessageSigned: sign !== 'assertion',
      });
      const xml = render(entityId, o);
      const r = await idp.createLoginResponse(sp, { extract: { request: { id: o.requestId ?? '' } } } as never, 'post', { email: o.nameId ?? '' }, () => ({ id: 'x', context: xml }));
      return (r as { context: string }).context;
    },
    unsigned: (o) => Buffer.from(render(entityId, o), 'utf8').toString('base64'),
  };
}

/** The ID of the AuthnRequest a redirect URL carries (HTTP-Redirect: deflated, base64). */
export function requestIdOf(location: string): string {
  const xml = zlib.inflateRawSync(Buffer.from(new URL(location).searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
  return /\sID="([^"]+)"/.exec(xml)![1]!;
}
