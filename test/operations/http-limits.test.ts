/**
 * HTTP conformance of the server itself (docs/operations.md "Limits of a request"): a 405 lists
 * the path's methods in `Allow`; a URL past its limit is 414 and a header block past its limit
 * 431, with the JSON error body (SCIM's under /scim/v2), whether the service's check or Node's
 * parser refuses it; a request that is not HTTP is 400 with the body. Over a real socket to the
 * server of `npm start` (src/http/node-server.ts).
 */
import net, { type AddressInfo } from 'node:net';
import type http from 'node:http';
import request from 'supertest';
import { readContractOperations } from '../../src/http/contract';
import { errorFormatOfPath } from '../../src/http/match';
import { createAppServer } from '../../src/http/node-server';
import { PARSER_MAX_HEADER_BYTES } from '../../src/http/oversized-request';
import { startTestApp, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection } from '../helpers/factories';

let t: TestApp;
let server: http.Server;
let port: number;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  const appServer = createAppServer({ errorFormatOf: errorFormatOfPath(readContractOperations()) });
  appServer.serve(t.app);
  server = appServer.server;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  await t.close();
  await closeOwnerConnection();
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `raw` as it is and reads the answer until the server closes the connection. */
function exchange(raw: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
    socket.end(raw);
  });
}

const get = (target: string, extra = '') => exchange(`GET ${target} HTTP/1.1\r\nHost: localhost\r\n${extra}Connection: close\r\n\r\n`);

function expectServiceError(a: Answer, status: number, error: string): void {
  expect(a.status).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(a.body) as { error: string; detail: string; request_id: string };
  expect(body.error).toBe(error);
  expect(body.detail).toEqual(expect.any(String));
  expect(body.request_id).toBe(a.headers['x-request-id']);
}

function expectScimError(a: Answer, status: number): void {
  expect(a.status).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/scim\+json/);
  expect(JSON.parse(a.body)).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: String(status) });
}

describe('405 carries Allow', () => {
  it('lists every method the path answers (as the contract declares them)', async () => {
    const path = '/api/setup/tenant/{tenant_id}';
    const declared = readContractOperations().filter((o) => o.path === path).flatMap((o) => [o.method, ...o.forwardedMethods]);
    const r = await request(server).post('/api/setup/tenant/0b1a2c3d-0000-4000-8000-000000000000').set('Authorization', `Bearer ${adminToken()}`).send({});
    expect([r.status, r.body.error]).toEqual([405, 'Method not allowed']);
    expect(r.headers.allow!.split(', ').sort()).toEqual([...new Set(declared)].sort());
  });

  it('under /scim/v2 too, with the SCIM error body', async () => {
    const r = await request(server).delete('/scim/v2/Users');
    expect(r.status).toBe(405);
    expect(r.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(r.headers.allow!.split(', ').sort()).toEqual(['GET', 'POST']);
  });
});

describe('a URL too long: 414 with the error body', () => {
  it('a 17 000-byte query string', async () => expectServiceError(await get(`/healthz?q=${'a'.repeat(17_000)}`), 414, 'URI too long'));
  it('under /scim/v2, the SCIM error body', async () => expectScimError(await get(`/scim/v2/Users?filter=${'a'.repeat(17_000)}`), 414));
  it("past even the HTTP parser's bound", async () => expectServiceError(await get(`/healthz?q=${'a'.repeat(PARSER_MAX_HEADER_BYTES + 1000)}`), 414, 'URI too long'));
});

describe('a header block too large: 431 with the error body', () => {
  it('one large header', async () => expectServiceError(await get('/healthz', `X-Big: ${'b'.repeat(17_000)}\r\n`), 431, 'Request header fields too large'));
  it('many headers', async () => {
    const many = Array.from({ length: 40 }, (_, i) => `X-H${i}: ${'c'.repeat(500)}\r\n`).join('');
    expectServiceError(await get('/api/setup/tenants', many), 431, 'Request header fields too large');
  });
  it('under /scim/v2, the SCIM error body', async () => expectScimError(await get('/scim/v2/Users', `X-Big: ${'b'.repeat(17_000)}\r\n`), 431));
  it("past even the HTTP parser's bound", async () =>
    expectServiceError(await get('/healthz', `X-Big: ${'b'.repeat(PARSER_MAX_HEADER_BYTES + 1000)}\r\n`), 431, 'Request header fields too large'));
});

it('a request that is not HTTP: 400 with the error body', async () => {
  expectServiceError(await exchange('NOT HTTP AT ALL\r\n\r\n'), 400, 'Bad request');
});

it('a request within both limits reaches the service, even with a head past 16 KiB in all', async () => {
  const a = await get(`/no-such-page?q=${'a'.repeat(9_000)}`, `X-Big: ${'b'.repeat(9_000)}\r\n`);
  expectServiceError(a, 404, 'Not found');
  expect((await get('/healthz', `X-Big: ${'b'.repeat(9_000)}\r\n`)).status).toBe(200);
});
