/**
 * A real JWKS (and OIDC discovery document) served over HTTP on 127.0.0.1, with its own RSA
 * key, for the `jwks` and `oidc` providers. Counts the requests it serves.
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
  sign(claims: Record<string, unknown>, opts?: jwt.SignOptions & { key?: crypto.KeyObject; kid?: string }): string;
  close(): Promise<void>;
}

export async function startJwksServer(): Promise<JwksServer> {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = crypto.randomBytes(8).toString('hex');
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as object), kid, alg: 'RS256', use: 'sig' };
  const requests = { jwks: 0, discovery: 0 };
  let base = '';
  const server = http.createServer((req, res) => {
    if (req.url === '/jwks.json') {
      requests.jwks++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
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
    sign(claims, opts = {}) {
      const { key, kid: k, ...rest } = opts;
      return jwt.sign(claims, key ?? privateKey, { algorithm: 'RS256', keyid: k ?? kid, expiresIn: 600, ...rest });
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
