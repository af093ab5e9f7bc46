/**
 * The SAML 2.0 side of a tenant's connection (docs/sso.md#saml), with @node-saml/node-saml as
 * the service provider: the AuthnRequest by HTTP-Redirect, and the Response by HTTP-POST, whose
 * Response or Assertion must be signed by the connection's certificate. node-saml checks the
 * signature (and refuses a second assertion: wrapping), the issuer, the audience, InResponseTo
 * and NotBefore / NotOnOrAfter (60 s skew); this module adds what it leaves out — Recipient and
 * Destination equal to the ACS URL — and reads the email.
 */
import crypto from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { SAML, SamlStatusError, ValidateInResponseTo, type CacheProvider, type Profile } from '@node-saml/node-saml';
import { certificatePem } from './saml-metadata';

const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol';
const SAML_NS = 'urn:oasis:names:tc:SAML:2.0:assertion';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
export const EMAIL_FORMAT = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const EMAIL_ATTRIBUTES = ['email', 'mail', 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'];
export const SKEW_MS = 60_000;

export interface SamlConnectionConfig {
  readonly spEntityId: string;
  readonly acsUrl: string;
  readonly idpEntityId: string;
  readonly idpSsoUrl: string;
  /** Base64 DER. */
  readonly idpCertificate: string;
}

/** A refusal with its reason code (docs/sso.md#when-a-sign-in-fails). */
export class SamlRefusal extends Error {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'SamlRefusal';
  }
}

function samlFor(c: SamlConnectionConfig, cache: CacheProvider): SAML {
  return new SAML({
    entryPoint: c.idpSsoUrl,
    issuer: c.spEntityId,
    callbackUrl: c.acsUrl,
    audience: c.spEntityId,
    idpCert: certificatePem(c.idpCertificate),
    idpIssuer: c.idpEntityId,
    wantAssertionsSigned: false,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SKEW_MS,
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: 10 * 60_000,
    cacheProvider: cache,
    identifierFormat: EMAIL_FORMAT,
    disableRequestedAuthnContext: true,
    generateUniqueId: () => `_${crypto.randomBytes(20).toString('hex')}`,
  });
}

/** The redirect URL carrying a fresh AuthnRequest, and its ID (for InResponseTo). */
export async function authnRequest(c: SamlConnectionConfig): Promise<{ url: string; requestId: string }> {
  let requestId: string | null = null;
  const cache: CacheProvider = {
    saveAsync: async (key, value) => {
      requestId = key;
      return { value, createdAt: Date.now() };
    },
    getAsync: async () => null,
    removeAsync: async () => null,
  };
  const url = await samlFor(c, cache).getAuthorizeUrlAsync('', undefined, {});
  if (requestId === null) throw new Error('node-saml made no request ID');
  return { url, requestId };
}

function parse(xml: string): Document | null {
  let failed = false;
  const doc = new DOMParser({ errorHandler: { warning: () => undefined, error: () => (failed = true), fatalError: () => (failed = true) } }).parseFromString(xml, 'text/xml');
  return failed || !doc?.documentElement ? null : (doc as unknown as Document);
}

const children = (parent: Element, ns: string, name: string): Element[] => Array.from(parent.childNodes as unknown as ArrayLike<Node>).filter((n): n is Element => n.nodeType === 1 && (n as Element).namespaceURI === ns && (n as Element).localName === name);
const all = (parent: Document | Element, ns: string, name: string): Element[] => Array.from(parent.getElementsByTagNameNS(ns, name) as unknown as ArrayLike<Element>);

/** What is read before any check: the Response's InResponseTo and whether anything in it is signed. */
export function peekResponse(samlResponse: string): { inResponseTo: string | null; signed: boolean; destination: string | null } {
  if (samlResponse.length > 1_000_000 || !/^[A-Za-z0-9+/=\s]+$/.test(samlResponse)) throw new SamlRefusal('saml_response_malformed', 'SAMLResponse is not base64 (or longer than 1 MB).');
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new SamlRefusal('saml_response_malformed', 'The SAML response contains a DOCTYPE.');
  const doc = parse(xml);
  const root = doc?.documentElement;
  if (!root || root.namespaceURI !== SAMLP || root.localName !== 'Response') throw new SamlRefusal('saml_response_malformed', 'SAMLResponse is not a SAML 2.0 Response.');
  return { inResponseTo: root.getAttribute('InResponseTo') || null, signed: all(doc!, DS, 'Signature').length > 0, destination: root.getAttribute('Destination') || null };
}

function reasonOf(err: unknown): SamlRefusal {
  if (err instanceof SamlRefusal) return err;
  if (err instanceof SamlStatusError) return new SamlRefusal('saml_idp_status', err.message.slice(0, 300));
  const m = err instanceof Error ? err.message : String(err);
  const table: Array<[RegExp, string]> = [
    [/multiple assertions|Cannot obtain assertion from signed data/, 'saml_assertion_wrapped'],
    [/signature/i, 'saml_signature_invalid'],
    [/InResponseTo/i, 'saml_in_response_to_invalid'],
    [/not yet valid/, 'saml_assertion_not_yet_valid'],
    [/expired|No valid subject confirmation/, 'saml_assertion_expired'],
    [/Audience/i, 'saml_audience_mismatch'],
    [/issuer/i, 'saml_issuer_mismatch'],
  ];
  const hit = table.find(([re]) => re.test(m));
  return new SamlRefusal(hit?.[1] ?? 'saml_response_invalid', m.slice(0, 300));
}

export interface SamlAssertion {
  readonly assertionId: string;
  /** Until when the assertion ID is remembered (its NotOnOrAfter, at least 10 minutes ahead). */
  readonly keepUntil: Date;
  readonly issuer: string;
  readonly subject: string;
  readonly email: string | null;
  readonly name: string | null;
}

function emailOf(profile: Profile): string | null {
  if (profile.nameIDFormat === EMAIL_FORMAT && profile.nameID.includes('@')) return profile.nameID.toLowerCase();
  for (const a of EMAIL_ATTRIBUTES) {
    const v = profile[a];
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s === 'string' && s.includes('@')) return s.trim().toLowerCase();
  }
  return null;
}

/**
 * Validates the POSTed response for the request `requestId` (already checked unused and of this
 * connection); throws SamlRefusal with its reason.
 */
export async function validateResponse(c: SamlConnectionConfig, samlResponse: string, requestId: string): Promise<SamlAssertion> {
  const cache: CacheProvider = {
    saveAsync: async () => null,
    getAsync: async (key) => (key === requestId ? new Date().toISOString() : null),
    removeAsync: async () => null,
  };
  let profile: Profile | null;
  try {
    ({ profile } = await samlFor(c, cache).validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (err) {
    throw reasonOf(err);
  }
  if (!profile) throw new SamlRefusal('saml_response_invalid', 'The response carries no assertion.');
  const assertion = parse(profile.getAssertionXml?.() ?? '')?.documentElement;
  if (!assertion) throw new SamlRefusal('saml_response_invalid', 'The signed assertion could not be read.');
  const confirmations = all(assertion, SAML_NS, 'SubjectConfirmationData');
  const recipients = confirmations.map((d) => d.getAttribute('Recipient'));
  if (recipients.length === 0 || recipients.some((r) => r !== c.acsUrl)) {
    throw new SamlRefusal('saml_recipient_mismatch', `SubjectConfirmationData Recipient is '${String(recipients[0] ?? 'missing').slice(0, 300)}', expected '${c.acsUrl}'.`);
  }
  const assertionId = assertion.getAttribute('ID') ?? '';
  if (assertionId === '') throw new SamlRefusal('saml_response_invalid', 'The assertion has no ID.');
  const conditions = children(assertion, SAML_NS, 'Conditions')[0];
  const ends = [conditions?.getAttribute('NotOnOrAfter'), ...confirmations.map((d) => d.getAttribute('NotOnOrAfter'))].map((s) => (s ? Date.parse(s) : NaN)).filter((n) => !Number.isNaN(n));
  const keepUntil = new Date(Math.max(Date.now() + 10 * 60_000, ...ends.map((e) => e + SKEW_MS)));
  const name = [profile['http://schemas.microsoft.com/identity/claims/displayname'], profile.displayName, profile.name].find((v) => typeof v === 'string' && v !== '') as string | undefined;
  return { assertionId, keepUntil, issuer: profile.issuer, subject: profile.nameID, email: emailOf(profile), name: name ?? null };
}

/** The SP metadata XML served at the connection's metadata URL. */
export function spMetadata(c: SamlConnectionConfig): string {
  return samlFor(c, { saveAsync: async () => null, getAsync: async () => null, removeAsync: async () => null }).generateServiceProviderMetadata(null);
}
