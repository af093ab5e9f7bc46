/**
 * Domain names as a tenant claims them (docs/domains.md#what-can-be-claimed): one trailing dot
 * dropped, lower-cased, IDNA-converted to its A-label (node:url `domainToASCII`), then refused
 * when it is not a host name, a wildcard, an IP address, a name without a registrable domain
 * (`localhost`, a public suffix such as `com`, `co.uk` or `github.io`, from the maintained
 * public suffix list of `tldts`), or a free or disposable mail provider's domain.
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { parse as parseDomain } from 'tldts';
import { ApiError } from '../../errors';
import { isPublicMailDomain } from '../../context/mail-domains';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The A-label of a claimable domain, or a 400 naming why not. */
export function claimableDomain(input: string): string {
  const bad = (why: string) => new ApiError('validation', `'${input.slice(0, 300)}' cannot be claimed: ${why}`);
  if (input.includes('*')) throw bad('a wildcard is not a domain; claim the domain itself (a verified domain covers its subdomains).');
  if (/\s/.test(input) || input.includes('@') || input.includes('/') || input.includes(':')) throw bad('expected a domain name such as acme.com.');
  const trimmed = input.endsWith('.') ? input.slice(0, -1) : input;
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (ascii === '' || ascii.length > 253) throw bad('not a valid domain name.');
  const parsed = parseDomain(ascii, { allowPrivateDomains: true });
  if (parsed.isIp || /^[0-9.]+$/.test(ascii) || ascii.startsWith('[')) throw bad('an IP address is not a domain.');
  if (!ascii.split('.').every((l) => LABEL.test(l))) throw bad('not a valid domain name (letters, digits and hyphens in dot-separated labels).');
  if (!ascii.includes('.') || parsed.domain === null) {
    throw bad(parsed.publicSuffix === ascii && ascii.includes('.') ? 'it is a public suffix: anyone can register names under it.' : 'it has no registrable domain (a public suffix or a local name).');
  }
  if (isPublicMailDomain(ascii)) throw bad('it is a free or disposable mail provider; its addresses belong to the provider\'s users, not to one organization.');
  return ascii;
}

/** The U-label form shown to people (`xn--bcher-kva.example` → `bücher.example`). */
export function unicodeDomain(ascii: string): string {
  return domainToUnicode(ascii) || ascii;
}

/** A path's domain in its stored form (A-label); null when it cannot be one. */
export function storedDomain(input: string): string | null {
  const trimmed = input.endsWith('.') ? input.slice(0, -1) : input;
  const ascii = domainToASCII(trimmed.toLowerCase());
  return ascii === '' ? null : ascii;
}

/**
 * An email's domain and its parents, A-labels, longest first (`ann@eu.acme.com` →
 * `eu.acme.com`, `acme.com`, `com`): what a verified domain may cover. Null when malformed.
 */
export function emailDomains(email: string): string[] | null {
  const at = email.lastIndexOf('@');
  if (at <= 0 || at === email.length - 1) return null;
  const ascii = storedDomain(email.slice(at + 1).trim());
  if (ascii === null || ascii.length > 253) return null;
  const labels = ascii.split('.');
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
}
