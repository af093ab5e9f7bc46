/**
 * Tools for the security suites: a database-wide snapshot (rows and a content digest of every
 * table, to prove a request changed nothing), broken tokens of every kind, raw HTTP for what
 * supertest cannot send (duplicate headers, no Content-Type), and a check of Object.prototype.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { LOCAL_ISSUER, loadOrCreateLocalKeys, signLocalToken } from '../../src/auth/local-keys';
import { TENANT_TABLES } from '../../src/db/schema';
import { TEST_DATA_DIR } from './app';

export const ALL_TABLES = ['tenants', ...TENANT_TABLES, 'idempotency_keys'] as const;

/** Rows and an md5 of the full content of every table: equal snapshots mean nothing changed. */
export async function snapshot(db: Knex): Promise<Record<string, { rows: number; digest: string }>> {
  const out: Record<string, { rows: number; digest: string }> = {};
  for (const table of ALL_TABLES) {
    const r = await db.raw<{ rows: Array<{ n: string; digest: string | null }> }>(
      `select count(*) as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${table} t`,
    );
    out[table] = { rows: Number(r.rows[0]!.n), digest: r.rows[0]!.digest ?? '' };
  }
  return out;
}

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/** Tokens that must all be refused with 401, by what is wrong with them. */
export function brokenTokens(sub: string): Record<string, string> {
  const keys = loadOrCreateLocalKeys(TEST_DATA_DIR);
  const now = Math.floor(Date.now() / 1000);
  const good = signLocalToken(keys, { sub, admin: true });
  const [h, p, s] = good.split('.') as [string, string, string];
  const otherDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-otherkey-'));
  const otherKeys = loadOrCreateLocalKeys(otherDir);
  fs.rmSync(otherDir, { recursive: true, force: true });
  const pem = keys.publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const payload = { sub, iss: LOCAL_ISSUER, iat: now, exp: now + 600, roles: ['admin'] };
  const hsHeader = b64({ alg: 'HS256', typ: 'JWT', kid: keys.kid });
  const hsBody = b64(payload);
  const hsSig = crypto.createHmac('sha256', pem).update(`${hsHeader}.${hsBody}`).digest('base64url');
  const rs = (claims: Record<string, unknown>, k = keys) => {
    const header = b64({ alg: 'RS256', typ: 'JWT', kid: k.kid });
    const body = b64(claims);
    const sig = crypto.sign('RSA-SHA256', Buffer.from(`${header}.${body}`), k.privateKey).toString('base64url');
    return `${header}.${body}.${sig}`;
  };
  return {
    'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(payload)}.`,
    'HS256 signed with the public key (algorithm confusion)': `${hsHeader}.${hsBody}.${hsSig}`,
    expired: rs({ ...payload, iat: now - 7200, exp: now - 3600 }),
    'not yet valid (nbf in an hour)': rs({ ...payload, nbf: now + 3600 }),
    'wrong issuer': rs({ ...payload, iss: 'https://evil.example' }),
    'no sub': rs({ iss: LOCAL_ISSUER, iat: now, exp: now + 600, roles: ['admin'] }),
    'empty sub': rs({ ...payload, sub: '' }),
    'no exp': rs({ sub, iss: LOCAL_ISSUER, iat: now, roles: ['admin'] }),
    'signed by another key': rs(payload, otherKeys),
    'payload tampered after signing': `${h}.${b64({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'someone-else' })}.${s}`,
    'signature stripped': `${h}.${p}.`,
    'signature of another token': `${h}.${p}.${rs({ ...payload, sub: 'x' }).split('.')[2]}`,
    'not a JWT': 'not.a.jwt',
    'two segments': `${h}.${p}`,
    'garbage base64': '!!!.@@@.###',
    'eight kilobytes of garbage': 'a'.repeat(8 * 1024),
    'JSON header that is not an object': `${b64('"x"')}.${p}.${s}`,
    // docs/security.md#security-and-robustness: input bounds, iat in the future
    'iat ten years ahead': rs({ ...payload, iat: now + 10 * 365 * 86_400 }),
    'unknown crit header parameter': (() => {
      const header = b64({ alg: 'RS256', typ: 'JWT', kid: keys.kid, crit: ['x-ext'], 'x-ext': true });
      const body = b64(payload);
      return `${header}.${body}.${crypto.sign('RSA-SHA256', Buffer.from(`${header}.${body}`), keys.privateKey).toString('base64url')}`;
    })(),
    'sub of 6000 characters': rs({ ...payload, sub: 's'.repeat(6000) }),
    'sub of 2048 CJK characters': rs({ ...payload, sub: '字'.repeat(2048) }),
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  raw: string;
}

/**
 * Sends bytes as they are (duplicate headers, missing Content-Type, conflicting lengths) and
 * parses the response loosely. The socket is closed by us after the response or by the server.
 */
export function rawRequest(port: number, request: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      data += c;
      const parsed = parse(data);
      if (parsed) {
        socket.destroy();
        resolve(parsed);
      }
    });
    socket.on('end', () => {
      const parsed = parse(data);
      if (parsed) resolve(parsed);
      else reject(new Error(`incomplete response: ${JSON.stringify(data)}`));
    });
    socket.on('error', reject);
    socket.write(request);
  });
}

function parse(data: string): RawResponse | null {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const [statusLine, ...lines] = data.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  let body = data.slice(end + 4);
  const length = headers['content-length'];
  if (length !== undefined && Buffer.byteLength(body) < Number(length)) return null;
  if (headers['transfer-encoding'] === 'chunked') {
    if (!body.endsWith('0\r\n\r\n')) return null;
    let out = '';
    let rest = body;
    for (;;) {
      const nl = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.slice(0, nl), 16);
      if (!size) break;
      out += rest.slice(nl + 2, nl + 2 + size);
      rest = rest.slice(nl + 2 + size + 2);
    }
    body = out;
  }
  if (length === undefined && headers['transfer-encoding'] !== 'chunked' && headers.connection !== 'close') return null;
  let parsed: unknown = body;
  try {
    parsed = body ? JSON.parse(body) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: parsed, raw: data };
}

/** Keys on Object.prototype and Array.prototype right now (a pollution leaves one behind). */
export function prototypeKeys(): string[] {
  return [...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Array.prototype).map((k) => `Array.${k}`)].sort();
}
