/**
 * Public and disposable mail domains, from maintained npm lists (email-providers for free mail
 * providers, disposable-email-domains for throwaway ones). An email at one of these never names
 * a tenant.
 */
import freeProviders from 'email-providers/all.json';
import disposable from 'disposable-email-domains';

const PUBLIC_DOMAINS: ReadonlySet<string> = new Set([...(freeProviders as string[]), ...(disposable as string[])].map((d) => d.toLowerCase()));

/** True when `domain` (or a parent of it) is a free or disposable mail provider. */
export function isPublicMailDomain(domain: string): boolean {
  const d = domain.toLowerCase().replace(/\.$/, '');
  if (PUBLIC_DOMAINS.has(d)) return true;
  // googlemail.co.uk-style subdomains of a listed provider count too
  const parts = d.split('.');
  for (let i = 1; i < parts.length - 1; i++) {
    if (PUBLIC_DOMAINS.has(parts.slice(i).join('.'))) return true;
  }
  return false;
}
