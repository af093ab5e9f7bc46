// Imported explicitly (not ambient) so `npm run build`, whose tsconfig has no jest types, still compiles src/.
import { describe, expect, it } from '@jest/globals';
import type { LookupAddress } from 'node:dns';
import { forbiddenAddressKind, forbiddenHostKind, ForbiddenNetworkError, guardedLookup } from '../../src/domain/webhook-network';

describe('forbiddenAddressKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.10.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fc00::1', 'private'],
    ['fd12:3456:789a::1', 'private'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local'],
    ['::ffff:10.0.0.1', 'private'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::1', 'loopback'],
  ])('%s is %s', (ip, kind) => {
    expect(forbiddenAddressKind(ip)).toBe(kind);
  });

  it.each(['8.8.8.8', '93.184.216.34', '172.32.0.1', '100.128.0.1', '192.0.2.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    '%s is allowed',
    (ip) => {
      expect(forbiddenAddressKind(ip)).toBeNull();
    },
  );
});

describe('forbiddenHostKind', () => {
  it('judges URL hostnames: literals, reserved names, and names by what they resolve to', async () => {
    expect(await forbiddenHostKind('[::1]')).toBe('loopback');
    expect(await forbiddenHostKind('[::ffff:7f00:1]')).toBe('loopback');
    expect(await forbiddenHostKind('metadata.google.internal')).toBe('internal');
    expect(await forbiddenHostKind('metadata.google.internal.')).toBe('internal');
    expect(await forbiddenHostKind('db.localhost')).toBe('loopback');
    // `localhost` is not special-cased by name: it is refused because it resolves to loopback.
    expect(await forbiddenHostKind('localhost')).toBe('loopback');
    expect(await forbiddenHostKind('8.8.8.8')).toBeNull();
    // A name that cannot resolve is left to the check at connect time.
    expect(await forbiddenHostKind('no-such-host.invalid')).toBeNull();
  });
});

describe('guardedLookup', () => {
  const lookup = (host: string, all: boolean) =>
    new Promise<{ err: Error | null; address: string | LookupAddress[]; family?: number }>((resolve) =>
      guardedLookup(host, { all }, (err, address, family) => resolve({ err, address, family })),
    );

  it('answers in both shapes net.connect asks for (one address, or all of them)', async () => {
    // An address literal resolves to itself without DNS.
    expect(await lookup('93.184.216.34', false)).toEqual({ err: null, address: '93.184.216.34', family: 4 });
    expect(await lookup('93.184.216.34', true)).toEqual({ err: null, address: [{ address: '93.184.216.34', family: 4 }], family: undefined });
  });

  it('fails with ForbiddenNetworkError for a name on a refused network', async () => {
    for (const all of [false, true]) {
      const r = await lookup('localhost', all);
      expect(r.err).toBeInstanceOf(ForbiddenNetworkError);
      expect((r.err as ForbiddenNetworkError).kind).toBe('loopback');
    }
    expect(((await lookup('metadata.google.internal', true)).err as ForbiddenNetworkError).kind).toBe('internal');
  });
});
