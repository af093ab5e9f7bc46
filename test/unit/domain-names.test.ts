/** Domain names as claimed (docs/domains.md#what-can-be-claimed) and SERVICE_DNS_SERVERS (docs/configuration.md). */
import { loadConfig, ConfigError } from '../../src/config';
import { claimableDomain, emailDomains, unicodeDomain } from '../../src/domain/domains/names';

describe('claimableDomain', () => {
  it('normalizes: one trailing dot, upper case, Unicode to its A-label', () => {
    expect(claimableDomain('ACME.com.')).toBe('acme.com');
    expect(claimableDomain('Bücher.example')).toBe('xn--bcher-kva.example');
    expect(unicodeDomain('xn--bcher-kva.example')).toBe('bücher.example');
    expect(claimableDomain('acme.com.evil.test')).toBe('acme.com.evil.test');
    expect(claimableDomain('acme.github.io')).toBe('acme.github.io');
  });

  it.each(['*.acme.com', '1.2.3.4', '[::1]', 'localhost', 'com', 'co.uk', 'github.io', 'gmail.com', 'mail.gmail.com', 'a..b.com', 'acme.com..', 'ac me.com', 'x'.repeat(64) + '.com'])('refuses %j', (d) => {
    expect(() => claimableDomain(d)).toThrow(expect.objectContaining({ status: 400 }));
  });
});

describe('emailDomains', () => {
  it('the domain and its parents, A-labels, longest first', () => {
    expect(emailDomains('ann@EU.Acme.com')).toEqual(['eu.acme.com', 'acme.com']);
    expect(emailDomains('ann@bücher.example')).toEqual(['xn--bcher-kva.example']);
    expect(emailDomains('no-at-sign')).toBeNull();
  });
});

describe('SERVICE_DNS_SERVERS', () => {
  it('a comma list of IP addresses with optional ports; anything else is reported', () => {
    expect(loadConfig({ SERVICE_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.2,[::1]:53' }).dnsServers).toEqual(['127.0.0.1:5353', '10.0.0.2', '[::1]:53']);
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(() => loadConfig({ SERVICE_DNS_SERVERS: 'dns.example:53' })).toThrow(ConfigError);
    expect(() => loadConfig({ SERVICE_DNS_SERVERS: '127.0.0.1:99999' })).toThrow(/SERVICE_DNS_SERVERS/);
  });
});
