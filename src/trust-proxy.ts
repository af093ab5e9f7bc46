/**
 * SERVICE_TRUST_PROXY: which proxies in front of the service tell it the client's address
 * (docs/configuration.md#behind-proxies). A proxy appends the address it saw to the
 * X-Forwarded-For the client sent, so only the right-most entries are the proxies' own; the
 * left-most is whatever the client wrote. Express's `trust proxy: true` takes the left-most,
 * so `true` here means one hop, never express's `true`.
 */
import net from 'node:net';

/** false: the socket's address; a number: that many proxies (hops); a list: the proxies' addresses/CIDRs. */
export type TrustProxy = false | number | readonly string[];

/** Names express (proxy-addr) knows for address ranges. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
const TRUE = new Set(['true', 'yes', 'on']);
const FALSE = new Set(['false', 'no', 'off']);
const MAX_HOPS = 100;

/** Parses the variable's value; returns the problem as a sentence (without the variable's name) when it is bad. */
export function parseTrustProxy(value: string | undefined): { value: TrustProxy } | { problem: string } {
  const v = value?.trim() ?? '';
  if (v === '') return { value: false };
  const lower = v.toLowerCase();
  if (FALSE.has(lower)) return { value: false };
  // One hop: the address the nearest proxy saw (the right-most X-Forwarded-For entry).
  if (TRUE.has(lower)) return { value: 1 };
  if (/^\d+$/.test(v)) {
    const hops = Number(v);
    if (hops > MAX_HOPS) return { problem: `expected false, a hop count from 0 to ${MAX_HOPS}, or the proxies' addresses/CIDRs, got '${v}'` };
    return { value: hops === 0 ? false : hops };
  }
  let items: unknown;
  if (v.startsWith('[')) {
    try {
      items = JSON.parse(v);
    } catch {
      return { problem: 'not a valid JSON array' };
    }
    if (!Array.isArray(items) || !items.every((i) => typeof i === 'string')) return { problem: 'the JSON value must be an array of strings' };
  } else {
    items = v.split(',');
  }
  const list = (items as string[]).map((i) => i.trim()).filter((i) => i !== '');
  if (list.length === 0) return { problem: "expected false, a hop count, or the proxies' addresses/CIDRs" };
  const bad = list.filter((i) => !isProxyAddress(i));
  if (bad.length) {
    return { problem: `'${bad[0]}' is not an IP address, a CIDR (10.0.0.0/8, fd00::/8) or one of loopback, linklocal, uniquelocal; use false, true (one hop), a hop count or a list of addresses` };
  }
  return { value: Object.freeze(list.map((i) => (RANGE_NAMES.has(i.toLowerCase()) ? i.toLowerCase() : i))) };
}

/** An address, a CIDR (prefix length or IPv4 netmask) or a range name, as express's `trust proxy` accepts them. */
function isProxyAddress(item: string): boolean {
  if (RANGE_NAMES.has(item.toLowerCase())) return true;
  const slash = item.indexOf('/');
  const address = slash === -1 ? item : item.slice(0, slash);
  const family = net.isIP(address);
  if (family === 0) return false;
  if (slash === -1) return true;
  const range = item.slice(slash + 1);
  if (/^\d{1,3}$/.test(range)) return Number(range) <= (family === 4 ? 32 : 128);
  return family === 4 && net.isIPv4(range) && isContiguousMask(range);
}

/** 255.255.0.0 yes, 255.0.255.0 no: express refuses a netmask that is not a prefix. */
function isContiguousMask(mask: string): boolean {
  const bits = mask.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const inverted = 0xffffffff - bits;
  return (inverted & (inverted + 1)) === 0;
}

/** The value for express's `trust proxy` setting: a hop count or an address list, never express's `true` (the left-most entry). */
export function expressTrustProxy(trust: TrustProxy): false | number | string[] {
  if (trust === false) return false;
  if (typeof trust === 'number') return trust;
  return [...trust];
}
