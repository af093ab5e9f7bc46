/**
 * SERVICE_TRUST_PROXY parsed and mapped onto express's `trust proxy`: behind a proxy that
 * appends to the client's X-Forwarded-For, the client address is the entry the nearest trusted
 * proxy wrote, never the left-most one the client chose (docs/configuration.md#behind-proxies).
 */
import express from 'express';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { expressTrustProxy, parseTrustProxy, type TrustProxy } from '../../src/trust-proxy';

const parsed = (v: string): TrustProxy => {
  const r = parseTrustProxy(v);
  if (!('value' in r)) throw new Error(`'${v}' refused: ${r.problem}`);
  return r.value;
};

/** req.ip of a request from 127.0.0.1 with this X-Forwarded-For, through express with the mapped setting. */
async function clientAddress(setting: string, forwardedFor: string): Promise<string> {
  const app = express();
  app.set('trust proxy', expressTrustProxy(parsed(setting)));
  app.get('/', (req, res) => {
    res.json({ ip: req.ip });
  });
  const r = await request(app).get('/').set('X-Forwarded-For', forwardedFor).expect(200);
  return (r.body as { ip: string }).ip.replace(/^::ffff:/, '');
}

describe('parseTrustProxy', () => {
  it('false, a hop count, or the proxies addresses/CIDRs; true is one hop', () => {
    expect(parsed('')).toBe(false);
    for (const v of ['false', 'no', 'off', 'FALSE', '0']) expect(parsed(v)).toBe(false);
    for (const v of ['true', 'yes', 'on', 'True', '1']) expect(parsed(v)).toBe(1);
    expect(parsed('2')).toBe(2);
    expect(parsed('10.0.0.0/8, 192.168.1.7,fd00::/8 ,::1')).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', '::1']);
    expect(parsed('["loopback", "172.16.0.0/255.240.0.0"]')).toEqual(['loopback', '172.16.0.0/255.240.0.0']);
    expect(parsed('Loopback,uniquelocal,linklocal')).toEqual(['loopback', 'uniquelocal', 'linklocal']);
  });

  it('refuses anything else with a sentence', () => {
    for (const v of ['maybe', '-1', '101', '1.5', '10.0.0.0/33', 'fd00::/129', '10.0.0.0/255.0.255.0', 'proxy.example.com', '[1, 2]', '[oops', ',', '*']) {
      const r = parseTrustProxy(v);
      expect({ v, refused: 'problem' in r }).toEqual({ v, refused: true });
    }
  });

  it('stops the boot with the other configuration errors', () => {
    expect(() => loadConfig({ SERVICE_TRUST_PROXY: 'sometimes', SERVICE_PORT: 'x' })).toThrow(/SERVICE_TRUST_PROXY: .*'sometimes'[\s\S]*SERVICE_PORT|SERVICE_PORT[\s\S]*SERVICE_TRUST_PROXY/);
    expect(() => loadConfig({ SERVICE_TRUST_PROXY: '10.0.0.0/40' })).toThrow(/SERVICE_TRUST_PROXY: '10.0.0.0\/40' is not an IP address/);
    expect(loadConfig({ SERVICE_TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({}).trustProxy).toBe(false);
  });

  it('every accepted value is one express accepts', () => {
    for (const v of ['false', 'true', '3', '10.0.0.0/8,::1', 'loopback', '172.16.0.0/255.240.0.0', '127.0.0.1/32']) {
      expect(() => express().set('trust proxy', expressTrustProxy(parsed(v)))).not.toThrow();
    }
  });
});

describe('the client address express derives from the mapped setting', () => {
  // The test client connects from 127.0.0.1, standing for the nearest proxy.
  it('true: the entry the nearest proxy appended, not the left-most one the client wrote', async () => {
    expect(await clientAddress('true', '198.51.100.66, 203.0.113.9')).toBe('203.0.113.9');
    expect(await clientAddress('true', '203.0.113.9')).toBe('203.0.113.9');
  });

  it('a hop count: that many proxies from the right', async () => {
    expect(await clientAddress('2', '198.51.100.66, 203.0.113.9, 10.0.0.5')).toBe('203.0.113.9');
  });

  it("the proxies' addresses: the right-most entry that is not one of them", async () => {
    expect(await clientAddress('loopback,10.0.0.0/8', '198.51.100.66, 203.0.113.9, 10.0.0.5')).toBe('203.0.113.9');
    expect(await clientAddress('127.0.0.1', '198.51.100.66, 203.0.113.9')).toBe('203.0.113.9');
  });

  it('false: the socket address, whatever the header says', async () => {
    expect(await clientAddress('false', '198.51.100.66')).toBe('127.0.0.1');
  });
});
