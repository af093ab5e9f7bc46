/**
 * Which network addresses a webhook may reach (docs/events.md#webhooks). A platform admin's URL
 * must not turn the service into a proxy to its own neighbours (the database, Redis, the cloud
 * metadata service), so loopback, private, link-local, unspecified, multicast and reserved
 * addresses are refused, in every spelling (IPv4, IPv6, IPv4-mapped and NAT64/6to4-embedded IPv4),
 * unless SERVICE_WEBHOOK_ALLOW_PRIVATE_NETWORKS is set. The URL is checked when it is saved, and
 * every delivery checks the addresses its connection actually uses (`guardedLookup`), because DNS
 * answers can change after the URL was accepted.
 */
import dns from 'node:dns';
import net from 'node:net';

type Range = readonly [prefix: readonly number[], bits: number, kind: string];

const V4_RANGES: readonly Range[] = [
  [[0, 0, 0, 0], 8, 'unspecified'],
  [[10, 0, 0, 0], 8, 'private'],
  [[100, 64, 0, 0], 10, 'private'], // shared address space (carrier-grade NAT)
  [[127, 0, 0, 0], 8, 'loopback'],
  [[169, 254, 0, 0], 16, 'link-local'], // cloud metadata (169.254.169.254)
  [[172, 16, 0, 0], 12, 'private'],
  [[192, 0, 0, 0], 24, 'reserved'],
  [[192, 168, 0, 0], 16, 'private'],
  [[198, 18, 0, 0], 15, 'private'], // benchmarking networks
  [[224, 0, 0, 0], 4, 'multicast'],
  [[240, 0, 0, 0], 4, 'reserved'], // includes 255.255.255.255
];

const V6_RANGES: readonly Range[] = [
  [[0xfc], 7, 'private'], // unique local
  [[0xfe, 0x80], 10, 'link-local'],
  [[0xfe, 0xc0], 10, 'private'], // deprecated site-local
  [[0xff], 8, 'multicast'],
  [[0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48, 'private'], // local-use NAT64
  [[0x01, 0x00, 0, 0, 0, 0, 0, 0], 64, 'reserved'], // discard-only
];

function inRange(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < bits; i += 8) {
    const take = Math.min(8, bits - i);
    const mask = (0xff << (8 - take)) & 0xff;
    if (((bytes[i / 8] ?? 0) & mask) !== ((prefix[i / 8] ?? 0) & mask)) return false;
  }
  return true;
}

function parseV4(s: string): number[] | null {
  if (net.isIPv4(s) !== true) return null;
  return s.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address (trailing dotted IPv4 allowed), or null. */
function parseV6(s: string): number[] | null {
  if (!net.isIPv6(s)) return null;
  let text = s.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = parseV4(text.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    text = `${text.slice(0, lastColon + 1)}0:0`; // placeholder groups, replaced below
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, undefined];
  const groups = (g: string | undefined) => (g ? g.split(':').filter((x) => x !== '') : []);
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const missing = 8 - h.length - r.length;
  const all = rest === undefined ? h : [...h, ...Array<string>(missing).fill('0'), ...r];
  if (all.length !== 8) return null;
  const bytes = all.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

function v4Kind(b: readonly number[]): string | null {
  for (const [prefix, bits, kind] of V4_RANGES) if (inRange(b, prefix, bits)) return kind;
  return null;
}

/**
 * Why `ip` may not receive webhooks ('loopback', 'private', 'link-local', 'unspecified',
 * 'multicast', 'reserved'), or null when it may. Not an IP address: null (names are resolved first).
 */
export function forbiddenAddressKind(ip: string): string | null {
  const v4 = parseV4(ip);
  if (v4) return v4Kind(v4);
  const b = parseV6(ip);
  if (!b) return null;
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 16)) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  // IPv4 carried inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96).
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4Kind(b.slice(12));
  if (zeros(0, 12)) return v4Kind(b.slice(12));
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4Kind(b.slice(12));
  if (b[0] === 0x20 && b[1] === 0x02) return v4Kind(b.slice(2, 6)); // 6to4 (2002::/16)
  for (const [prefix, bits, kind] of V6_RANGES) if (inRange(b, prefix, bits)) return kind;
  return null;
}

/** Host names that name the local machine or an internal network whatever DNS says here. */
function forbiddenNameKind(host: string): string | null {
  if (host.endsWith('.localhost')) return 'loopback';
  // `.internal` is reserved for private use (cloud metadata: metadata.google.internal); `.local` is mDNS.
  if (host === 'internal' || host.endsWith('.internal') || host.endsWith('.local')) return 'internal';
  return null;
}

/** Thrown (or passed to a lookup callback) when a webhook's host is on a refused network. */
export class ForbiddenNetworkError extends Error {
  readonly code = 'EWEBHOOKFORBIDDEN';
  constructor(readonly kind: string) {
    super(`webhook address refused: ${kind} network`);
    this.name = 'ForbiddenNetworkError';
  }
}

/** A URL's hostname without IPv6 brackets, lowercased, without a trailing dot. */
export function bareHost(hostname: string): string {
  const h = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return h.toLowerCase().replace(/\.$/, '');
}

const LOOKUP_BOUND_MS = 5_000;

/**
 * The refused kind of network `hostname` (a URL's hostname) is on, or null. An IP address is
 * judged as it is; a name by its suffix, then by every address DNS gives for it (one refused
 * address refuses the name). A name that does not resolve (yet) is not refused here: every
 * delivery checks the address it connects to.
 */
export async function forbiddenHostKind(hostname: string): Promise<string | null> {
  const host = bareHost(hostname);
  if (net.isIP(host)) return forbiddenAddressKind(host);
  const byName = forbiddenNameKind(host);
  if (byName) return byName;
  let timer: NodeJS.Timeout | undefined;
  try {
    const addresses = await Promise.race([
      dns.promises.lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('lookup timed out')), LOOKUP_BOUND_MS);
      }),
    ]);
    for (const a of addresses) {
      const kind = forbiddenAddressKind(a.address);
      if (kind) return kind;
    }
    return null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request / net.connect that resolves like the default one but fails
 * with ForbiddenNetworkError when any address of the name is refused, so the socket only ever
 * connects to an address that passed the check at that moment. (An IP literal never reaches a
 * lookup: check it with forbiddenAddressKind before connecting.)
 */
export function guardedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  const byName = forbiddenNameKind(bareHost(hostname));
  if (byName) {
    callback(new ForbiddenNetworkError(byName), []);
    return;
  }
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    for (const a of addresses) {
      const kind = forbiddenAddressKind(a.address);
      if (kind) return callback(new ForbiddenNetworkError(kind), []);
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
