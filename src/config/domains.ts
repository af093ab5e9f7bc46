/** Verified domains: the DNS servers the proof is asked of (docs/configuration.md, docs/domains.md). */
import { isIP } from 'node:net';
import type { EnvReader } from './env-reader';

export interface DomainsConfig {
  /** SERVICE_DNS_SERVERS: `host[:port]` entries as node:dns `setServers` takes them; empty: the system's resolvers. */
  readonly dnsServers: readonly string[];
}

/** One `host[:port]` (an IPv6 address with a port in brackets: `[::1]:5353`); null when unusable. */
function dnsServer(entry: string): string | null {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  const plain = /^([^:]+)(?::(\d{1,5}))?$/.exec(entry);
  const host = bracketed?.[1] ?? (isIP(entry) === 6 ? entry : plain?.[1]);
  const port = bracketed ? bracketed[2] : isIP(entry) === 6 ? undefined : plain?.[2];
  if (host === undefined || isIP(host) === 0) return null;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return null;
  return entry;
}

export function readDomainsConfig(env: EnvReader): DomainsConfig {
  const raw = env.str('SERVICE_DNS_SERVERS');
  if (raw === null) return { dnsServers: Object.freeze([]) };
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = entries.filter((e) => dnsServer(e) === null);
  if (bad.length > 0) env.problems.push(`SERVICE_DNS_SERVERS: expected a comma list of IP addresses with an optional port (10.0.0.2, 127.0.0.1:5353, [::1]:53), got ${bad.map((b) => `'${b}'`).join(', ')}`);
  return { dnsServers: Object.freeze(entries) };
}
