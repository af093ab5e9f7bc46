/**
 * A real JWKS (and OIDC discovery document) served over HTTP on 127.0.0.1, with its own RSA
 * key, for the `jwks` and `oidc` providers. Counts the requests it serves; can publish a new
 * key (rotation) and answer 503 to every request (an identity provider that is down).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import jwt from 'jsonwebtoken';

export interface JwksServer {
  url: string;
  jwksUri: string;
  issuer: string;
  kid: string;
  requests: { jwks: number; discovery: number };
  /** Publishes a new key beside the current ones (as an identity provider rotating keys). */
  rotate(): { kid: string; key: crypto.KeyObject };
  /** Stops publishing the key `kid` (an identity provider withdrawing a leaked key). */
  withdraw(kid: string): void;
  /** While true, every request is answered 503 (the identity provider is down). */
  setDown(down: boolean): void;
  sign(claims: Record<string, unknown>, opts?: jwt.SignOptions & { key?: crypto.KeyObject; kid?: string }): string;
  close(): Promise<void>;
}

export async function startJwksServer(): Promise<JwksServer> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = crypto.randomBytes(8).toString('hex');
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as object), kid, alg: 'RS256', use: 'sig' };
  const published: object[] = [jwk];
  const requests = { jwks: 0, discovery: 0 };
  let down = false;
  let base = '';
  const server = http.createServer((req, res) => {
    if (down) {
      res.writeHead(503).end();
    } else if (req.url === '/jwks.json') {
      requests.jwks++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
    } else if (req.url === '/.well-known/openid-configuration') {
      requests.discovery++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks.json` }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    jwksUri: `${base}/jwks.json`,
    issuer: base,
    kid,
    requests,
    rotate() {
      const pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      const newKid = crypto.randomBytes(8).toString('hex');
      published.push({ ...(pair.publicKey.export({ format: 'jwk' }) as object), kid: newKid, alg: 'RS256', use: 'sig' });
      return { kid: newKid, key: pair.privateKey };
    },
    withdraw(k) {
      const i = published.findIndex((j) => (j as { kid?: string }).kid === k);
      if (i >= 0) published.splice(i, 1);
    },
    setDown(value) {
      down = value;
    },
    sign(claims, opts = {}) {
      const { key, kid: k, ...rest } = opts;
      return jwt.sign(claims, key ?? privateKey, { algorithm: 'RS256', keyid: k ?? kid, expiresIn: 600, ...rest });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
