/**
 * Hostile requests: each row of the table is sent and must get its documented status and Error
 * body (the contract hook validates every response too); afterwards every table of the
 * database is byte-for-byte what it was. Then the hostile inputs the contract accepts (SQL in
 * names, leading/trailing hyphens, `__proto__` keys in settings and metadata) are stored as
 * plain data and read back verbatim, and Object.prototype is untouched.
 *
 * Runs on a database of its own, so the whole-database snapshot is not disturbed by other
 * test files writing in parallel.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import knexFactory, { type Knex } from 'knex';
import request from 'supertest';
import { LOCAL_ISSUER } from '../../src/auth/local-keys';
import { startTestApp, type TestApp } from '../helpers/app';
import { contractProblem } from '../helpers/contract';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { brokenTokens, prototypeKeys, rawRequest, snapshot } from '../helpers/hostile';
import { adminToken, tokenFor, unique } from '../helpers/factories';

jest.setTimeout(60_000);

let fresh: FreshDatabase;
let owner: Knex;
let t: TestApp;
let server: http.Server;
let port: number;
let tenantA: { id: string; slug: string };
let boardA: string;
let memberA: { id: string; subject: string };
const admin = `Bearer ${adminToken()}`;
let tokA: string;
const protoBefore = prototypeKeys();

beforeAll(async () => {
  fresh = await createFreshDatabase('tenant_service_security');
  owner = knexFactory({ client: 'pg', connection: fresh.url, pool: { min: 0, max: 2 } });
  t = await startTestApp({ SERVICE_DATABASE_URL: fresh.url, SERVICE_MULTI_TENANT_MODE: 'true' });
  server = http.createServer(t.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;

  const [tenant] = await owner('tenants').insert({ name: 'Tenant A', slug: unique('sec-a') }).returning(['id', 'slug']);
  tenantA = tenant as { id: string; slug: string };
  const subject = unique('alice');
  const [user] = await owner('users')
    .insert({ tenant_id: tenantA.id, issuer: LOCAL_ISSUER, subject, email: `${subject}@a.example`, role: 'admin' })
    .returning(['id']);
  memberA = { id: (user as { id: string }).id, subject };
  const [board] = await owner('boards').insert({ tenant_id: tenantA.id, name: 'A board', created_by: memberA.id }).returning(['id']);
  boardA = (board as { id: string }).id;
  tokA = `Bearer ${tokenFor({ sub: subject })}`;
});

afterAll(async () => {
  await new Promise<void>((r) => server?.close(() => r()));
  await t?.close();
  await owner?.destroy();
  await fresh?.drop();
});

interface Hostile {
  name: string;
  send: () => request.Test;
  status: number;
  error: string;
  /** More checks on the body. */
  also?: (body: Record<string, unknown>) => void;
}

const json = (test: request.Test, raw: string) => test.set('Content-Type', 'application/json').send(raw);
const nested = (depth: number): unknown => {
  let v: unknown = { leaf: true };
  for (let i = 0; i < depth; i++) v = { n: v };
  return v;
};

function hostileTable(): Hostile[] {
  const app = t.app;
  const post = (p: string, auth = admin) => request(app).post(p).set('Authorization', auth);
  const get = (p: string, auth = admin) => request(app).get(p).set('Authorization', auth);
  const put = (p: string, auth = admin) => request(app).put(p).set('Authorization', auth);
  const del = (p: string, auth = admin) => request(app).delete(p).set('Authorization', auth);
  const inA = (test: request.Test) => test.set('Authorization', tokA).set('X-Tenant', tenantA.slug);
  const V = 'Validation error';
  const rows: Hostile[] = [
    // SQL injection in every string field and query parameter
    { name: 'SQL in slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: "x'; drop table tenants; --" }), status: 400, error: V },
    { name: 'SQL tautology in slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: "x' or '1'='1" }), status: 400, error: V },
    { name: 'SQL in limit', send: () => get('/api/setup/tenants?limit=1;drop%20table%20tenants'), status: 400, error: V },
    { name: 'SQL in cursor', send: () => get("/api/setup/tenants?cursor=' or 1=1 --"), status: 400, error: V },
    { name: 'SQL union in cursor', send: () => get('/api/setup/tenants?cursor=x%27%20union%20select%20*%20from%20users--'), status: 400, error: V },
    { name: 'SQL in audit tenant_slug', send: () => get("/api/setup/audit?tenant_slug=' or 1=1 --"), status: 400, error: V },
    { name: 'SQL in tenant_id path', send: () => get(`/api/setup/tenant/${encodeURIComponent("'; drop table tenants; --")}`), status: 400, error: V },
    { name: 'SQL appended to a uuid', send: () => get(`/api/setup/tenant/${tenantA.id}${encodeURIComponent("' or '1'='1")}`), status: 400, error: V },
    { name: 'SQL in update slug', send: () => put(`/api/setup/tenant/${tenantA.id}`).send({ slug: 'a;drop table users' }), status: 400, error: V },
    { name: 'SQL in update status', send: () => put(`/api/setup/tenant/${tenantA.id}`).send({ status: "active' --" }), status: 400, error: V },
    { name: 'SQL in dry_run', send: () => del(`/api/setup/tenant/${tenantA.id}?dry_run=true;delete`), status: 400, error: V },
    {
      name: 'SQL in X-Tenant',
      send: () => get('/api/boards', tokA).set('X-Tenant', "a' or '1'='1"),
      status: 400,
      error: 'Invalid X-Tenant header format',
      also: (b) => expect(b.provided_tenant).toBe("a' or '1'='1"),
    },
    { name: 'SQL in board id', send: () => inA(request(app).get(`/api/boards/${encodeURIComponent("1' or '1'='1")}`)), status: 400, error: V },
    { name: 'SQL in boards cursor', send: () => inA(request(app).get("/api/boards?cursor=' or 1=1 --")), status: 400, error: V },
    { name: 'SQL in members cursor', send: () => inA(request(app).get("/api/tenant/members?cursor=' or 1=1 --")), status: 400, error: V },
    { name: 'SQL in member id', send: () => inA(request(app).delete(`/api/tenant/members/${encodeURIComponent("' or 1=1 --")}`)), status: 400, error: V },
    { name: 'SQL in member email', send: () => inA(request(app).post('/api/tenant/members')).send({ subject: 'x', email: "'; drop table users; --", role: 'member' }), status: 400, error: V },
    { name: 'SQL in member role', send: () => inA(request(app).post('/api/tenant/members')).send({ subject: 'x', email: 'x@a.example', role: "admin' --" }), status: 400, error: V },
    { name: 'SQL in admin_email', send: () => post('/api/tenants/register', tokA).send({ organization_name: 'x', admin_email: "a@b.example' or 1=1 --" }), status: 400, error: V },
    { name: 'SQL in organization_slug', send: () => post('/api/tenants/register', tokA).send({ organization_name: 'x', organization_slug: "x';--", admin_email: 'a@b.example' }), status: 400, error: V },
    { name: 'SQL in organization_size', send: () => post('/api/tenants/register', tokA).send({ organization_name: 'x', admin_email: 'a@b.example', organization_size: "small' --" }), status: 400, error: V },
    // JSON injection
    { name: 'duplicate key, the last one hostile', send: () => json(post('/api/setup/tenant'), '{"name":"ok","slug":"ok-slug","slug":"bad slug!"}'), status: 400, error: V },
    { name: 'operator object as slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: { $ne: null } }), status: 400, error: V },
    { name: 'operator object as name', send: () => post('/api/setup/tenant').send({ name: { $gt: '' }, slug: unique('x') }), status: 400, error: V },
    { name: 'trailing garbage after JSON', send: () => json(post('/api/setup/tenant'), '{"name":"x","slug":"y"}garbage'), status: 400, error: 'Bad request' },
    { name: 'JSON string instead of object', send: () => json(post('/api/setup/tenant'), JSON.stringify(JSON.stringify({ name: 'x', slug: 'y' }))), status: 400, error: V },
    { name: 'truncated JSON', send: () => json(post('/api/boards', tokA).set('X-Tenant', tenantA.slug), '{"name": "x'), status: 400, error: 'Bad request' },
    { name: 'unknown field', send: () => post('/api/setup/tenant').send({ name: 'x', slug: unique('x'), is_default: true }), status: 400, error: V },
    { name: 'number as boolean', send: () => post('/api/setup/tenant').send({ name: 'x', slug: unique('x'), include_sample_data: 'yes' }), status: 400, error: V },
    // unicode, over-long, empty
    { name: 'full-width slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: 'ａｃｍｅ' }), status: 400, error: V },
    { name: 'NUL in slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: 'acme\u0000' }), status: 400, error: V },
    { name: 'zero-width space in slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: '\u200bacme' }), status: 400, error: V },
    { name: 'uppercase slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: 'ACME' }), status: 400, error: V },
    { name: 'accented slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: 'ącme' }), status: 400, error: V },
    { name: 'empty slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: '' }), status: 400, error: V },
    { name: '256-character slug', send: () => post('/api/setup/tenant').send({ name: 'x', slug: 'a'.repeat(256) }), status: 400, error: V },
    { name: '256-character name', send: () => post('/api/setup/tenant').send({ name: 'n'.repeat(256), slug: unique('x') }), status: 400, error: V },
    { name: 'NUL in name', send: () => post('/api/setup/tenant').send({ name: 'a\u0000b', slug: unique('x') }), status: 400, error: V },
    { name: 'NUL in a settings key', send: () => post('/api/setup/tenant').send({ name: 'x', slug: unique('x'), settings: { 'k\u0000': 1 } }), status: 400, error: V },
    { name: 'NUL in a board name', send: () => inA(request(app).post('/api/boards')).send({ name: '\u0000' }), status: 400, error: V },
    { name: 'NUL in q', send: () => get('/api/setup/tenants?q=%00'), status: 400, error: V },
    { name: 'empty name', send: () => post('/api/setup/tenant').send({ name: '', slug: unique('x') }), status: 400, error: V },
    { name: 'white-space organization name', send: () => post('/api/tenants/register', tokA).send({ organization_name: ' \t ', admin_email: 'a@b.example' }), status: 400, error: V },
    { name: '501-character use_case', send: () => post('/api/tenants/register', tokA).send({ organization_name: 'x', admin_email: 'a@b.example', use_case: 'u'.repeat(501) }), status: 400, error: V },
    { name: 'unicode organization_slug', send: () => post('/api/tenants/register', tokA).send({ organization_name: 'x', organization_slug: 'ünïcode', admin_email: 'a@b.example' }), status: 400, error: V },
    { name: '256-character board name', send: () => inA(request(app).post('/api/boards')).send({ name: 'b'.repeat(256) }), status: 400, error: V },
    { name: '2001-character board description', send: () => inA(request(app).post('/api/boards')).send({ name: 'b', description: 'd'.repeat(2001) }), status: 400, error: V },
    { name: 'latin-1 X-Tenant', send: () => get('/api/boards', tokA).set('X-Tenant', Buffer.from('acmé', 'latin1').toString('latin1')), status: 400, error: 'Invalid X-Tenant header format' },
    { name: '256-character X-Tenant', send: () => get('/api/boards', tokA).set('X-Tenant', 'a'.repeat(256)), status: 400, error: 'Invalid X-Tenant header format' },
    { name: 'uppercase X-Tenant', send: () => get('/api/boards', tokA).set('X-Tenant', tenantA.slug.toUpperCase()), status: 400, error: 'Invalid X-Tenant header format' },
    { name: 'X-Tenant with a path', send: () => get('/api/boards', tokA).set('X-Tenant', '../default'), status: 400, error: 'Invalid X-Tenant header format' },
    { name: 'empty X-Tenant', send: () => get('/api/boards', tokA).set('X-Tenant', ''), status: 400, error: 'Invalid X-Tenant header format' },
    // path traversal and ids that are not UUIDs
    { name: 'encoded traversal in tenant_id', send: () => get('/api/setup/tenant/..%2F..%2Fetc%2Fpasswd'), status: 400, error: V },
    { name: 'encoded traversal in board id', send: () => inA(request(app).get('/api/boards/..%2F..%2Fsetup%2Ftenants')), status: 400, error: V },
    { name: 'encoded NUL as board id', send: () => inA(request(app).get('/api/boards/%00')), status: 400, error: V },
    { name: 'number as tenant_id', send: () => del('/api/setup/tenant/123'), status: 400, error: V },
    { name: 'uuid without hyphens', send: () => get(`/api/setup/tenant/${tenantA.id.replace(/-/g, '')}`), status: 400, error: V },
    { name: 'nil uuid', send: () => get('/api/setup/tenant/00000000-0000-0000-0000-000000000000'), status: 404, error: 'Tenant not found' },
    { name: 'unknown board', send: () => inA(request(app).get('/api/boards/00000000-0000-0000-0000-000000000000')), status: 404, error: 'Not found' },
    { name: 'non-uuid member id', send: () => inA(request(app).delete('/api/tenant/members/not-a-uuid')), status: 400, error: V },
    // arrays where objects are expected, other JSON types
    { name: 'array body', send: () => post('/api/setup/tenant').send([]), status: 400, error: V },
    { name: 'array of tenants', send: () => post('/api/setup/tenant').send([{ name: 'x', slug: unique('x') }]), status: 400, error: V },
    { name: 'null body', send: () => json(post('/api/setup/tenant'), 'null'), status: 400, error: V },
    { name: 'number body', send: () => json(post('/api/setup/tenant'), '42'), status: 400, error: V },
    { name: 'array settings', send: () => post('/api/setup/tenant').send({ name: 'x', slug: unique('x'), settings: [] }), status: 400, error: V },
    { name: 'string settings', send: () => post('/api/setup/tenant').send({ name: 'x', slug: unique('x'), settings: '{}' }), status: 400, error: V },
    { name: 'array settings on update', send: () => put(`/api/setup/tenant/${tenantA.id}`).send({ settings: [1, 2] }), status: 400, error: V },
    { name: 'empty update', send: () => put(`/api/setup/tenant/${tenantA.id}`).send({}), status: 400, error: V },
    { name: 'array metadata', send: () => post('/api/tenants/register', tokA).send({ organization_name: 'x', admin_email: 'a@b.example', metadata: ['x'] }), status: 400, error: V },
    { name: 'array board', send: () => inA(request(app).post('/api/boards')).send([{ name: 'x' }]), status: 400, error: V },
    // prototype-pollution keys where no free-form object is allowed
    { name: 'top-level __proto__', send: () => json(post('/api/setup/tenant'), `{"name":"x","slug":"${unique('x')}","__proto__":{"polluted":"yes"}}`), status: 400, error: V },
    { name: 'top-level constructor', send: () => json(post('/api/setup/tenant'), `{"name":"x","slug":"${unique('x')}","constructor":{"prototype":{"polluted":"yes"}}}`), status: 400, error: V },
    { name: '__proto__ in a board', send: () => json(inA(request(app).post('/api/boards')), '{"name":"x","__proto__":{"polluted":"yes"}}'), status: 400, error: V },
    // huge and deeply nested JSON
    { name: 'body over 1 MiB', send: () => post('/api/setup/tenant').send({ name: 'x', slug: unique('x'), settings: { blob: 'x'.repeat(1024 * 1024) } }), status: 413, error: 'Payload too large' },
    { name: 'settings nested 40 deep', send: () => post('/api/setup/tenant').send({ name: 'x', slug: unique('x'), settings: nested(40) }), status: 400, error: 'Bad request' },
    { name: 'metadata nested 40 deep', send: () => post('/api/tenants/register', tokA).send({ organization_name: 'x', admin_email: 'a@b.example', metadata: nested(40) }), status: 400, error: 'Bad request' },
    { name: 'arrays nested 5000 deep', send: () => json(post('/api/setup/tenant'), `${'['.repeat(5000)}${']'.repeat(5000)}`), status: 400, error: 'Bad request' },
    // wrong content types
    { name: 'text/plain', send: () => post('/api/setup/tenant').set('Content-Type', 'text/plain').send('{"name":"x","slug":"y"}'), status: 415, error: 'Unsupported media type' },
    { name: 'form encoded', send: () => post('/api/setup/tenant').type('form').send({ name: 'x', slug: 'y' }), status: 415, error: 'Unsupported media type' },
    { name: 'multipart', send: () => post('/api/setup/tenant').field('name', 'x').field('slug', 'y'), status: 415, error: 'Unsupported media type' },
    { name: 'application/xml', send: () => post('/api/setup/tenant').set('Content-Type', 'application/xml').send('<t><name>x</name></t>'), status: 415, error: 'Unsupported media type' },
    { name: 'JSON in latin-1', send: () => post('/api/setup/tenant').set('Content-Type', 'application/json; charset=latin1').send('{"name":"x","slug":"y"}'), status: 415, error: 'Unsupported media type' },
    // UTF-16 is a UTF charset body-parser decodes; these bytes are then not JSON.
    { name: 'UTF-8 bytes labelled UTF-16', send: () => post('/api/setup/tenant').set('Content-Type', 'application/json; charset=utf-16').send('{"name":"x","slug":"y"}'), status: 400, error: 'Bad request' },
    { name: 'application/json-patch+json', send: () => post('/api/setup/tenant').set('Content-Type', 'application/json-patch+json').send('[]'), status: 415, error: 'Unsupported media type' },
    // tokens
    { name: 'no Authorization', send: () => request(app).get('/api/setup/tenants'), status: 401, error: 'Unauthorized' },
    { name: 'Bearer without a token', send: () => request(app).get('/api/setup/tenants').set('Authorization', 'Bearer'), status: 401, error: 'Unauthorized' },
    { name: 'Basic credentials', send: () => request(app).get('/api/setup/tenants').set('Authorization', 'Basic YWRtaW46YWRtaW4='), status: 401, error: 'Unauthorized' },
    { name: 'token with a space', send: () => request(app).get('/api/setup/tenants').set('Authorization', `${admin} extra`), status: 401, error: 'Unauthorized' },
    { name: 'token in the query string only', send: () => request(app).get(`/api/setup/tenants?access_token=${admin.slice(7)}`), status: 401, error: 'Unauthorized' },
    ...Object.entries(brokenTokens(unique('mallory'))).map(([kind, token]) => ({
      name: `token: ${kind}`,
      send: () => request(app).get('/api/setup/tenants').set('Authorization', `Bearer ${token}`),
      status: 401,
      error: 'Unauthorized',
    })),
    // docs/security.md#security-and-robustness: input the contract must bound so that PostgreSQL can store and index it
    { name: 'member issuer of 2048 CJK characters', send: () => inA(request(app).post('/api/tenant/members')).send({ subject: 'x', issuer: '字'.repeat(2048), email: 'x@a.example', role: 'member' }), status: 400, error: V },
    { name: 'member issuer of 256 characters', send: () => inA(request(app).post('/api/tenant/members')).send({ subject: 'x', issuer: 'i'.repeat(256), email: 'x@a.example', role: 'member' }), status: 400, error: V },
    { name: 'member subject of 256 four-byte characters', send: () => inA(request(app).post('/api/tenant/members')).send({ subject: '𝄞'.repeat(256), email: 'x@a.example', role: 'member' }), status: 400, error: V },
    { name: 'member display_name of 6000 characters', send: () => inA(request(app).post('/api/tenant/members')).send({ subject: 'x', display_name: 'n'.repeat(6000), email: 'x@a.example', role: 'member' }), status: 400, error: V },
    ...(
      [
        ['February 30th', '2024-02-30T00:00:00.000000Z'],
        ['year 0000', '0000-01-01T00:00:00.000000Z'],
        ['February 29th of a common year', '2023-02-29T12:00:00.000000Z'],
        ['hour 24', '2024-01-01T24:00:00.000000Z'],
        ['second 60', '2024-01-01T23:59:60.000000Z'],
      ] as const
    ).flatMap(([what, ts]) => {
      const cursor = Buffer.from(JSON.stringify([1, ts, '00000000-0000-4000-8000-000000000000'])).toString('base64url');
      return [
        { name: `tenants cursor with ${what}`, send: () => get(`/api/setup/tenants?cursor=${cursor}`), status: 400, error: V },
        { name: `boards cursor with ${what}`, send: () => inA(request(app).get(`/api/boards?cursor=${cursor}`)), status: 400, error: V },
        { name: `members cursor with ${what}`, send: () => inA(request(app).get(`/api/tenant/members?cursor=${cursor}`)), status: 400, error: V },
      ];
    }),
    { name: 'malformed percent-escape %FF in a path', send: () => get('/api/setup/tenant/%FF'), status: 400, error: 'Bad request' },
    { name: 'truncated percent-escape %E0%A4%A in a path', send: () => get('/api/setup/tenant/%E0%A4%A'), status: 400, error: 'Bad request' },
    { name: 'malformed percent-escape in a board id', send: () => inA(request(app).get('/api/boards/%C0%AF')), status: 400, error: 'Bad request' },
    { name: 'malformed percent-escape on a DELETE', send: () => del('/api/setup/tenant/%E0%A4%A'), status: 400, error: 'Bad request' },
    // a member is not a platform admin
    { name: 'member on a setup endpoint', send: () => get(`/api/setup/tenant/${tenantA.id}`, tokA), status: 403, error: 'Forbidden' },
  ];
  return rows;
}

describe('hostile requests', () => {
  it('each gets its documented status and Error body, and no row of any table changes', async () => {
    const before = await snapshot(owner);
    const seen: Array<{ name: string; status: number; error: unknown }> = [];
    for (const h of hostileTable()) {
      const r = await h.send();
      seen.push({ name: h.name, status: r.status, error: r.body?.error });
      expect({ name: h.name, status: r.status, error: r.body?.error }).toEqual({ name: h.name, status: h.status, error: h.error });
      expect(typeof r.body.detail).toBe('string');
      expect(r.body.detail).not.toMatch(/\bat .+:\d+:\d+|select |insert |syntax error|node_modules/i);
      if (h.status === 401) expect(r.headers['www-authenticate']).toMatch(/^Bearer/);
      h.also?.(r.body as Record<string, unknown>);
    }
    expect(seen.length).toBeGreaterThan(90);
    expect(await snapshot(owner)).toEqual(before);
    expect(prototypeKeys()).toEqual(protoBefore);
    expect(t.logs.filter((l) => l.msg === 'Unhandled error')).toEqual([]);
  });

  it('read queries with SQL or LIKE wildcards in q match literally, not everything', async () => {
    for (const q of ["' or '1'='1", '%', '_', '\\', "%' --"]) {
      const r = await request(t.app).get(`/api/setup/tenants?q=${encodeURIComponent(q)}`).set('Authorization', admin).expect(200);
      expect({ q, total: r.body.total_count, tenants: r.body.tenants }).toEqual({ q, total: 0, tenants: [] });
    }
  });

  it('q with %, _ and \\ matches them literally and case-insensitively', async () => {
    const tag = unique('lit').replace(/-/g, '');
    const names = [`${tag} 100% Pure_Co`, `${tag} 100X PureXCo`, `${tag} back\\slash`, `${tag} ÉCOLE Ünïcode`];
    const ids: string[] = [];
    for (const name of names) {
      ids.push((await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name, slug: unique('lit') }).expect(201)).body.tenant_id);
    }
    const search = async (q: string) => {
      const r = await request(t.app).get(`/api/setup/tenants?q=${encodeURIComponent(q)}`).set('Authorization', admin).expect(200);
      return (r.body.tenants as Array<{ name: string }>).map((x) => x.name).sort();
    };
    expect(await search(`${tag} 100%`)).toEqual([names[0]]);
    expect(await search('% pure_')).toEqual([names[0]]);
    expect(await search(`${tag} 100_`)).toEqual([]);
    expect(await search('pure_co')).toEqual([names[0]]);
    expect(await search('PUREXCO')).toEqual([names[1]]);
    expect(await search('k\\s')).toEqual([names[2]]);
    expect(await search('école ünï')).toEqual([names[3]]);
    expect(await search(tag.toUpperCase())).toEqual([...names].sort());
    expect(await search('%'.repeat(255))).toEqual([]);
    expect(await search('_'.repeat(255))).toEqual([]);
    // A rename is searchable by its new name only (the lowercased copy follows every update).
    await request(t.app).put(`/api/setup/tenant/${ids[1]}`).set('Authorization', admin).send({ name: `${tag} Renamed_Ltd` }).expect(200);
    expect(await search('renamed_ltd')).toEqual([`${tag} Renamed_Ltd`]);
    expect(await search('PUREXCO')).toEqual([]);
  });

  it('a search of three or more letters can use the trigram indexes on name and slug', async () => {
    const plan = await owner.transaction(async (trx) => {
      await trx.raw('set local enable_seqscan = off');
      const r = await trx.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(
        "explain select count(*) from tenants where name_search like lower(?) or slug like lower(?)",
        ['%Acme Corp%', '%Acme Corp%'],
      );
      return r.rows.map((x) => x['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/Bitmap Index Scan on tenants_name_search_trgm/);
    expect(plan).toMatch(/Bitmap Index Scan on tenants_slug_trgm/);
  });

  it('duplicate and conflicting headers: the documented error, or Node refuses the request', async () => {
    const before = await snapshot(owner);
    const send = async (lines: string[], body = '') => {
      const r = await rawRequest(port, `${lines.join('\r\n')}\r\n\r\n${body}`);
      return r;
    };
    // Two X-Tenant headers are joined by Node ("a, a"), which is not a slug.
    const twoTenants = await send(['GET /api/boards HTTP/1.1', 'Host: x', `Authorization: ${tokA}`, `X-Tenant: ${tenantA.slug}`, `X-Tenant: ${tenantA.slug}`, 'Connection: close']);
    expect(twoTenants.status).toBe(400);
    expect(twoTenants.body).toMatchObject({ error: 'Invalid X-Tenant header format', provided_tenant: `${tenantA.slug}, ${tenantA.slug}` });
    expect(contractProblem('GET', '/api/boards', twoTenants)).toBeNull();

    // Node keeps the first Authorization header and drops the rest: a forged second one is ignored…
    const validFirst = await send(['GET /api/setup/tenants HTTP/1.1', 'Host: x', `Authorization: ${admin}`, 'Authorization: Bearer forged', 'Connection: close']);
    expect(validFirst.status).toBe(200);
    // …and a valid second one does not rescue a bad first one.
    const forgedFirst = await send(['GET /api/setup/tenants HTTP/1.1', 'Host: x', 'Authorization: Bearer forged', `Authorization: ${admin}`, 'Connection: close']);
    expect(forgedFirst.status).toBe(401);
    expect(contractProblem('GET', '/api/setup/tenants', forgedFirst)).toBeNull();

    // A dot-dot segment is not resolved by the server: no route has it (sent raw: clients would
    // normalise it away).
    const dotDot = await send(['GET /api/setup/tenant/../tenants HTTP/1.1', 'Host: x', `Authorization: ${admin}`, 'Connection: close']);
    expect(dotDot.status).toBe(404);
    expect(dotDot.body).toMatchObject({ error: 'Not found' });

    // A body without Content-Type is refused, not guessed.
    const body = JSON.stringify({ name: 'x', slug: unique('x') });
    const noType = await send(['POST /api/setup/tenant HTTP/1.1', 'Host: x', `Authorization: ${admin}`, `Content-Length: ${body.length}`, 'Connection: close'], body);
    expect(noType.status).toBe(415);
    expect(contractProblem('POST', '/api/setup/tenant', noType)).toBeNull();

    // Two Content-Types: Node keeps the first (text/plain), so the JSON is refused.
    const twoTypes = await send(
      ['POST /api/setup/tenant HTTP/1.1', 'Host: x', `Authorization: ${admin}`, 'Content-Type: text/plain', 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close'],
      body,
    );
    expect(twoTypes.status).toBe(415);

    // Request smuggling shapes: conflicting Content-Length, or Content-Length with chunked.
    // Node's parser refuses them before the app sees them (400, connection closed).
    const twoLengths = await send(['POST /api/setup/tenant HTTP/1.1', 'Host: x', `Authorization: ${admin}`, 'Content-Type: application/json', 'Content-Length: 5', `Content-Length: ${body.length}`, 'Connection: close'], body);
    expect(twoLengths.status).toBe(400);
    const smuggle = await send(
      ['POST /api/setup/tenant HTTP/1.1', 'Host: x', `Authorization: ${admin}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Transfer-Encoding: chunked', 'Connection: close'],
      `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    );
    expect(smuggle.status).toBe(400);

    expect(await snapshot(owner)).toEqual(before);
  });
});

describe('hostile input the contract accepts is stored as data', () => {
  it('SQL and markup in names, hyphen-edged and 255-character slugs, __proto__/constructor in settings and metadata', async () => {
    const before = await snapshot(owner);
    const hostileSettings =
      '{"__proto__":{"polluted":"yes","isAdmin":true},"constructor":{"prototype":{"polluted":"yes"}},"toString":"x","q":"\' or 1=1 --","features":["<script>"]}';
    const expectedSettings = JSON.parse(hostileSettings) as Record<string, unknown>;
    expect(Object.keys(expectedSettings)).toContain('__proto__'); // JSON.parse keeps it as an own key

    const cases = [
      { name: "Robert'); DROP TABLE tenants;--", slug: `-${unique('edge')}-` },
      { name: '<img src=x onerror=alert(1)> 名前 🚀', slug: `a${'-'.repeat(200)}${unique('z')}`.slice(0, 255) },
      { name: 'n'.repeat(255), slug: `${unique('long')}${'x'.repeat(255)}`.slice(0, 255) },
    ];
    const ids: string[] = [];
    for (const c of cases) {
      const r = await request(t.app)
        .post('/api/setup/tenant')
        .set('Authorization', admin)
        .set('Content-Type', 'application/json')
        .send(`{"name":${JSON.stringify(c.name)},"slug":${JSON.stringify(c.slug)},"settings":${hostileSettings}}`)
        .expect(201);
      expect(r.body).toMatchObject({ name: c.name, slug: c.slug, existing: false });
      ids.push(r.body.tenant_id);
      const read = await request(t.app).get(`/api/setup/tenant/${r.body.tenant_id}`).set('Authorization', admin).expect(200);
      expect({ name: read.body.name, slug: read.body.slug }).toEqual({ name: c.name, slug: c.slug });
      expect(Object.getPrototypeOf(read.body.settings)).toBe(Object.prototype);
      expect(read.body.settings).toEqual(expectedSettings);
      expect(Object.keys(read.body.settings).sort()).toEqual(Object.keys(expectedSettings).sort());
    }
    // The hyphen-edged slug is a working X-Tenant value too (the spec's pattern allows it).
    await request(t.app).get('/api/tenant').set('Authorization', admin).set('X-Tenant', cases[0]!.slug).expect(200);

    // Update with the same keys: replaced and stored as data.
    const upd = await request(t.app)
      .put(`/api/setup/tenant/${ids[0]}`)
      .set('Authorization', admin)
      .set('Content-Type', 'application/json')
      .send(`{"settings":${hostileSettings}}`)
      .expect(200);
    expect(upd.body.settings).toEqual(expectedSettings);

    // A board whose name is SQL and whose description is markup.
    const board = await request(t.app)
      .post('/api/boards')
      .set('Authorization', tokA)
      .set('X-Tenant', tenantA.slug)
      .send({ name: "'; delete from boards; --", description: '<script>alert(1)</script>' })
      .expect(201);
    const readBoard = await request(t.app).get(`/api/boards/${board.body.board_id}`).set('Authorization', tokA).set('X-Tenant', tenantA.slug).expect(200);
    expect(readBoard.body).toMatchObject({ name: "'; delete from boards; --", description: '<script>alert(1)</script>' });

    // Registration metadata with pollution keys: refused or stored, never applied.
    const reg = await request(t.app)
      .post('/api/tenants/register')
      .set('Authorization', `Bearer ${tokenFor({ sub: unique('reg'), email: 'reg@b.example' })}`)
      .set('Content-Type', 'application/json')
      .send(`{"organization_name":"Proto Org","admin_email":"reg@b.example","include_sample_data":false,"metadata":${hostileSettings}}`);
    expect([201, 400]).toContain(reg.status);

    expect(prototypeKeys()).toEqual(protoBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();

    // Exactly what was accepted was written: three tenants (+1 if the registration was), one board.
    const after = await snapshot(owner);
    const registered = reg.status === 201 ? 1 : 0;
    expect(after.tenants.rows - before.tenants.rows).toBe(3 + registered);
    expect(after.boards.rows - before.boards.rows).toBe(1);
    // The existing board of tenant A is untouched.
    expect(await owner('boards').where({ tenant_id: tenantA.id, id: boardA }).first('name')).toEqual({ name: 'A board' });
    expect(await owner('users').where({ tenant_id: tenantA.id, id: memberA.id }).first('role')).toEqual({ role: 'admin' });
  });
});

describe('the longest identity the contract and tokens allow fits PostgreSQL', () => {
  it('a member with a 255-character issuer and subject of 4-byte characters is added and found', async () => {
    const subject = `${'𝄞'.repeat(254)}${String.fromCodePoint(0x1f600 + Math.floor(Math.random() * 64))}`;
    const issuer = `${'𝄢'.repeat(250)}${unique('i').slice(-5)}`;
    const r = await request(t.app)
      .post('/api/tenant/members')
      .set('Authorization', admin) // direct adds are the platform admin's (docs/tenants.md#membership)
      .set('X-Tenant', tenantA.slug)
      .send({ subject, issuer, email: 'long@a.example', role: 'member' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ subject, issuer });
    expect(await owner('users').where({ tenant_id: tenantA.id, issuer, subject }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });
});
