/**
 * A SAML identity provider's metadata and certificate as a tenant admin pastes them
 * (docs/sso.md#saml): the entity id, the HTTP-Redirect SingleSignOnService and a signing
 * certificate, read with xmldom (the parser node-saml itself uses). Everything refused is a 400
 * naming what is missing.
 */
import crypto from 'node:crypto';
import { DOMParser } from '@xmldom/xmldom';
import { ApiError } from '../../errors';

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
const DS = 'http://www.w3.org/2000/09/xmldsig#';
export const HTTP_REDIRECT = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
export const MAX_METADATA_CHARS = 200_000;

export interface IdpMetadata {
  readonly entityId: string;
  readonly ssoUrl: string;
  /** Base64 DER. */
  readonly certificate: string;
}

const bad = (field: string, why: string) => new ApiError('validation', `${field}: ${why}`);

/**
 * A certificate given as PEM or as bare base64 DER: its base64 DER (no whitespace), after
 * checking that it parses as X.509; throws a 400 naming `field`.
 */
export function normalizeCertificate(input: string, field: string): string {
  const b64 = input
    .replace(/-----BEGIN CERTIFICATE-----/g, '')
    .replace(/-----END CERTIFICATE-----/g, '')
    .replace(/\s+/g, '');
  if (b64 === '' || !/^[A-Za-z0-9+/]+=*$/.test(b64)) throw bad(field, 'expected an X.509 certificate in PEM or base64 (DER).');
  try {
    new crypto.X509Certificate(Buffer.from(b64, 'base64'));
  } catch {
    throw bad(field, 'is not an X.509 certificate (PEM or base64 DER).');
  }
  return b64;
}

/** What the API shows of a certificate: its SHA-256 fingerprint, subject and validity. */
export function certificateInfo(b64: string): { fingerprint_sha256: string; subject: string; not_after: string } {
  const c = new crypto.X509Certificate(Buffer.from(b64, 'base64'));
  return { fingerprint_sha256: c.fingerprint256, subject: c.subject.replace(/\n/g, ', '), not_after: new Date(c.validTo).toISOString() };
}

/** The certificate as PEM, for node-saml. */
export function certificatePem(b64: string): string {
  return `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

function parse(xml: string): Document {
  const errors: string[] = [];
  const doc = new DOMParser({
    locator: {},
    errorHandler: { warning: () => undefined, error: (m: string) => errors.push(m), fatalError: (m: string) => errors.push(m) },
  }).parseFromString(xml, 'text/xml');
  if (errors.length > 0 || !doc?.documentElement) throw bad('body.idp_metadata_xml', `is not well-formed XML (${(errors[0] ?? 'no root element').split('\n')[0]!.slice(0, 200)}).`);
  return doc as unknown as Document;
}

const elements = (parent: Document | Element, ns: string, name: string): Element[] => Array.from(parent.getElementsByTagNameNS(ns, name) as unknown as ArrayLike<Element>);

/** Reads an IdP's metadata XML: 400 when malformed, without an IdP descriptor, an HTTP-Redirect sign-in URL or a signing certificate. */
export function parseIdpMetadata(xml: string): IdpMetadata {
  if (xml.length > MAX_METADATA_CHARS) throw bad('body.idp_metadata_xml', `is longer than ${MAX_METADATA_CHARS} characters.`);
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw bad('body.idp_metadata_xml', 'must not contain a DOCTYPE or entity declarations.');
  const doc = parse(xml);
  const entity = elements(doc, MD, 'EntityDescriptor').find((e) => elements(e, MD, 'IDPSSODescriptor').length > 0);
  if (!entity) throw bad('body.idp_metadata_xml', 'has no EntityDescriptor with an IDPSSODescriptor (is it the identity provider\'s metadata, in the SAML 2.0 metadata namespace?).');
  const entityId = entity.getAttribute('entityID') ?? '';
  if (entityId === '') throw bad('body.idp_metadata_xml', 'the EntityDescriptor has no entityID.');
  const idp = elements(entity, MD, 'IDPSSODescriptor')[0]!;
  const redirect = elements(idp, MD, 'SingleSignOnService').find((s) => s.getAttribute('Binding') === HTTP_REDIRECT);
  const ssoUrl = redirect?.getAttribute('Location') ?? '';
  if (ssoUrl === '') throw bad('body.idp_metadata_xml', `has no SingleSignOnService with the HTTP-Redirect binding (${HTTP_REDIRECT}); this service sends its AuthnRequest by redirect.`);
  const signing = elements(idp, MD, 'KeyDescriptor').filter((k) => (k.getAttribute('use') ?? 'signing') === 'signing');
  const certText = signing.flatMap((k) => elements(k, DS, 'X509Certificate')).map((c) => c.textContent ?? '').find((t) => t.trim() !== '');
  if (!certText) throw bad('body.idp_metadata_xml', 'has no signing certificate (a KeyDescriptor use="signing", or without use, holding an X509Certificate).');
  return { entityId, ssoUrl, certificate: normalizeCertificate(certText, 'body.idp_metadata_xml') };
}
