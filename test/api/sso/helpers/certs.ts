/**
 * Self-signed signing certificates for test SAML identity providers, made by the openssl CLI
 * (node:crypto reads X.509 but does not issue it).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface KeyAndCert {
  /** PKCS#8 PEM. */
  key: string;
  /** PEM. */
  cert: string;
  /** Base64 DER (the PEM's body). */
  certBase64: string;
}

export function makeKeyAndCert(cn = 'test-idp'): KeyAndCert {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sso-cert-'));
  try {
    const keyFile = path.join(dir, 'key.pem');
    const certFile = path.join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${cn}`], { stdio: 'ignore' });
    const cert = fs.readFileSync(certFile, 'utf8');
    return { key: fs.readFileSync(keyFile, 'utf8'), cert, certBase64: cert.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '') };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** IdP metadata XML (SAML 2.0) with an HTTP-Redirect SingleSignOnService and a signing certificate; parts can be left out. */
export function idpMetadataXml(opts: { entityId: string; ssoUrl: string; certBase64: string; redirect?: boolean; signingCert?: boolean }): string {
  const binding = opts.redirect === false ? 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST' : 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect';
  const key =
    opts.signingCert === false
      ? ''
      : `<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${opts.certBase64}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>`;
  return `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${opts.entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="false" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    ${key}
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:SingleSignOnService Binding="${binding}" Location="${opts.ssoUrl}"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`;
}
