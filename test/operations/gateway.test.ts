/**
 * A product behind REAL gateways (docs/gateways.md): Debian's nginx (auth_request) and Caddy
 * (forward_auth) run with the configurations users copy (examples/nginx.conf, examples/Caddyfile,
 * only their ports changed), in front of the example product (examples/product/server.js, a
 * child process), asking the real service's GET /api/tenant/decision. Through each gateway: a
 * member reaches the product with the right tenant id and role; a stranger, an unknown tenant
 * and a bad token are refused with the service's status; a client-sent X-Tenant-Id/X-Tenant-Role
 * never reaches the product, allowed or refused; a removed member is refused on the next request.
 * The product's tenant-token path is checked against an ES256 key set served over HTTP.
 *
 * Skipped only when /usr/sbin/nginx or /usr/bin/caddy is absent; .ci/run installs both.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import yaml from 'js-yaml';
import jwt from 'jsonwebtoken';
import { waitForPort, writeCaddyfile, writeNginxConfig } from '../../bench/scenarios/example-gateways';
import { startTestApp, type TestApp } from '../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tenantWithMember, tokenFor, unique } from '../helpers/factories';
import { SYSTEM_PERMISSIONS } from '../../src/context/permissions';
import { waitForFileContaining } from '../helpers/wait';

const ROOT = path.resolve(__dirname, '..', '..');
const NGINX = '/usr/sbin/nginx';
const CADDY = '/usr/bin/caddy';
const missing = [NGINX, CADDY].filter((p) => !fs.existsSync(p));
if (missing.length) process.stderr.write(`test/operations/gateway.test.ts: gateway tests SKIPPED, ${missing.join(' and ')} not found (apt-get install -y nginx-light caddy)\n`);
const withGateways = missing.length ? describe.skip : describe;

/** A port nothing listens on right now (the gateways cannot take port 0). */
async function sparePort(): Promise<number> {
  const s = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

interface Child {
  proc: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

function startChild(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Child {
  const proc = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  return {
    proc,
    output: () => out,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface ProductSeen {
  method: string;
  path: string;
  x_tenant_id: string | null;
  x_tenant_slug: string | null;
  x_tenant_role: string | null;
  x_tenant_permissions: string | null;
  x_user_id: string | null;
  x_user_subject: string | null;
  x_user_issuer: string | null;
  x_tenant_error: string | null;
  /** 'present' or null (the product never logs a token). */
  x_tenant_token: string | null;
  /** Whether the client's Authorization reached the product: 'present' or null. */
  authorization: string | null;
}

/** The example product as users run it (`node examples/product/server.js`); its stdout is one JSON line per request. */
async function startProduct(env: Record<string, string>): Promise<Child & { port: number; seen: () => ProductSeen[] }> {
  const port = await sparePort();
  const child = startChild(process.execPath, [path.join(ROOT, 'examples', 'product', 'server.js')], { ...process.env, PORT: String(port), HOST: '127.0.0.1', ...env });
  await waitForPort(port, 'the example product', child.proc, child.output);
  const seen = () =>
    child
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as ProductSeen & { msg: string })
      .filter((l) => l.msg === 'request');
  return { ...child, port, seen };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Header names as sent, one entry per header line (lower-cased), to count repeated ones. */
  names: string[];
  body: string;
}

function send(port: number, method: string, urlPath: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, names: res.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()), body: text }));
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${urlPath} timed out`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

let service: TestApp;
let serviceServer: http.Server;
let servicePort: number;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tenant-service-gateways-'));

beforeAll(async () => {
  if (missing.length) return;
  // One proxy in front (the gateway): the client address is the one the gateway saw.
  service = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_TRUST_PROXY: 'true' });
  serviceServer = http.createServer(service.app);
  await new Promise<void>((r) => serviceServer.listen(0, '127.0.0.1', r));
  servicePort = (serviceServer.address() as AddressInfo).port;
}, 120_000);

afterAll(async () => {
  if (serviceServer) {
    serviceServer.closeAllConnections();
    await new Promise((r) => serviceServer.close(r));
  }
  await service?.close();
  await closeOwnerConnection();
  fs.rmSync(tmp, { recursive: true, force: true });
});

interface Gateway {
  name: string;
  start(ports: { service: number; product: number; gateway: number }, dir: string): Child;
}

const GATEWAYS: Gateway[] = [
  {
    name: 'nginx (examples/nginx.conf)',
    start(ports, dir) {
      const args = writeNginxConfig(dir, ports);
      const check = spawnSync(NGINX, ['-t', ...args], { encoding: 'utf8' });
      if (check.status !== 0) throw new Error(`nginx -t refused the example configuration:\n${check.stderr}`);
      return startChild(NGINX, args);
    },
  },
  {
    name: 'Caddy (examples/Caddyfile)',
    start(ports, dir) {
      const file = writeCaddyfile(dir, ports);
      // Caddy's data and config directories in this test's directory, not the machine's.
      const env = { ...process.env, HOME: dir, XDG_DATA_HOME: path.join(dir, 'data'), XDG_CONFIG_HOME: path.join(dir, 'config') };
      const check = spawnSync(CADDY, ['validate', '--config', file, '--adapter', 'caddyfile'], { encoding: 'utf8', env });
      if (check.status !== 0) throw new Error(`caddy validate refused the example configuration:\n${check.stderr}`);
      return startChild(CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], env);
    },
  },
];

for (const gateway of GATEWAYS) {
  withGateways(`a product behind ${gateway.name}`, () => {
    let product: Awaited<ReturnType<typeof startProduct>>;
    let proxy: Child;
    let port: number;
    let dir: string;

    beforeAll(async () => {
      product = await startProduct({ PRODUCT_AUTH: 'gateway' });
      port = await sparePort();
      dir = fs.mkdtempSync(path.join(tmp, 'gw-'));
      proxy = gateway.start({ service: servicePort, product: product.port, gateway: port }, dir);
      await waitForPort(port, gateway.name, proxy.proc, proxy.output);
    }, 60_000);

    afterAll(async () => {
      await proxy?.stop();
      await product?.stop();
    });

    /**
     * The role's permissions as the product sees them on the catch-all route: the nginx example
     * forwards X-Tenant-Permissions there, the Caddy one does not (Caddy 2.6 would copy an empty
     * answer's header as its placeholder's text), so its product sees none.
     */
    const forwarded = (permissions: string[]) => (gateway.name.startsWith('nginx') ? permissions : []);

    /** The product's request lines since `mark`. */
    const seenSince = (mark: number) => product.seen().slice(mark);
    /**
     * The product's request lines since `mark` once there are `n` of them: its stdout pipe and
     * the gateway's answer reach this process independently, so the line may come second.
     */
    const awaitSeen = async (mark: number, n: number) => {
      for (let i = 0; i < 500 && seenSince(mark).length < n; i++) await new Promise((r) => setTimeout(r, 10));
      return seenSince(mark);
    };

    it('a member reaches the product with the tenant id, role and user injected; forged copies are replaced', async () => {
      const { tenant, user, token } = await tenantWithMember('admin');
      const mark = product.seen().length;
      // X-Tenant-Token is a header the decision does not set here (tenant tokens are off): the
      // gateway must drop the client's copy, not pass it through.
      const forged = { 'X-Tenant-Id': crypto.randomUUID(), 'X-Tenant-Role': 'owner', 'X-User-Id': crypto.randomUUID(), 'X-User-Issuer': 'https://forged.example', 'X-Tenant-Token': 'forged' };
      const r = await send(port, 'GET', '/whoami', { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, ...forged });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ tenantId: tenant.id, tenantSlug: tenant.slug, role: 'admin', permissions: forwarded([...SYSTEM_PERMISSIONS]), userId: user.id, subject: user.subject, idpIssuer: user.issuer, via: 'gateway' });
      expect(seenSince(mark)).toEqual([
        {
          msg: 'request',
          method: 'GET',
          path: '/whoami',
          x_tenant_id: tenant.id,
          x_tenant_slug: tenant.slug,
          x_tenant_role: 'admin',
          x_tenant_permissions: forwarded([...SYSTEM_PERMISSIONS]).join(' ') || null, // admin holds every system permission
          x_user_id: user.id,
          x_user_subject: user.subject,
          x_user_issuer: user.issuer,
          x_tenant_error: null,
          x_tenant_token: null,
          authorization: null,
        },
      ]);

      // A write with a body: the body reaches the product, never the decision.
      const created = await send(port, 'POST', '/projects', { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' }, JSON.stringify({ name: 'Apollo' }));
      expect(created.status).toBe(201);
      expect(JSON.parse(created.body)).toEqual({ tenant_id: tenant.id, name: 'Apollo', created_by: user.id });
    });

    it('a plain member gets the member role (the product refuses its admin-only write)', async () => {
      const { tenant, token } = await tenantWithMember('member');
      const forged = { 'X-Tenant-Role': 'admin' };
      const who = await send(port, 'GET', '/whoami', { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, ...forged });
      expect(JSON.parse(who.body)).toMatchObject({ tenantId: tenant.id, role: 'member' });
      const write = await send(port, 'POST', '/projects', { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json', ...forged }, '{}');
      expect(write.status).toBe(403);
    });

    it("a client's own copy of each identity header never reaches the product, on any route and method", async () => {
      const tenant = await createTenant();
      const admin = await createUser(tenant.id, { role: 'admin' });
      const accountant = await createUser(tenant.id, { role: await tenantRoleWith(tenant.id, 'invoices:write') });
      const forged = Object.fromEntries(IDENTITY_HEADERS.map((h) => [h, `forged-${h.toLowerCase()}`]));
      const as = (u: { subject: string }) => ({ Authorization: `Bearer ${tokenFor({ sub: u.subject })}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json', ...forged });
      const requests: Array<[string, string, { id: string; subject: string; issuer: string }, number]> = [
        ['GET', '/whoami', admin, 200],
        ['POST', '/projects', admin, 201],
        ['GET', '/invoices', admin, 200],
        ['GET', '/invoices?page=2', accountant, 200],
        ['POST', '/invoices', accountant, 201],
      ];
      for (const [method, url, who, status] of requests) {
        const mark = product.seen().length;
        const r = await send(port, method, url, as(who), method === 'POST' ? '{"amount":1}' : undefined);
        expect({ method, url, status: r.status }).toEqual({ method, url, status });
        const seen = await awaitSeen(mark, 1);
        expect(seen).toHaveLength(1);
        // Each identity header is the decision's or absent, never the client's.
        expect(JSON.stringify(seen)).not.toContain('forged');
        expect(seen[0]).toMatchObject({ x_tenant_id: tenant.id, x_tenant_slug: tenant.slug, x_user_id: who.id, x_user_subject: who.subject, x_user_issuer: who.issuer, x_tenant_error: null, x_tenant_token: null });
      }
    });

    it('the per-method pattern: every member reads /invoices; writing needs invoices:write', async () => {
      const { tenant, user, token } = await tenantWithMember('member');
      const headers = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' };
      const mark = product.seen().length;
      const read = await send(port, 'GET', '/invoices', headers);
      expect({ status: read.status, body: JSON.parse(read.body) as unknown }).toEqual({ status: 200, body: { tenant_id: tenant.id, invoices: [] } });
      expect((await send(port, 'HEAD', '/invoices', headers)).status).toBe(200);
      for (const [method, url] of [['POST', '/invoices'], ['PUT', '/invoices/1'], ['PATCH', '/invoices/1'], ['DELETE', '/invoices/1']] as const) {
        const r = await send(port, method, url, headers, method === 'DELETE' ? undefined : '{"amount":1}');
        expect({ method, status: r.status, error: r.headers['x-tenant-error'], detail: (JSON.parse(r.body) as { detail: string }).detail }).toEqual({
          method,
          status: 403,
          error: 'Access denied',
          detail: expect.stringContaining('invoices:write'),
        });
      }
      expect((await awaitSeen(mark, 2)).map((l) => [l.method, l.path, l.x_user_id])).toEqual([
        ['GET', '/invoices', user.id],
        ['HEAD', '/invoices', user.id],
      ]);
    });

    it('a route that needs a permission: refused for a member whose role lacks it, allowed for one whose role holds it', async () => {
      const tenant = await createTenant();
      const accountant = await createUser(tenant.id, { role: await tenantRoleWith(tenant.id, 'invoices:write') });
      const plain = await createUser(tenant.id);
      const as = (u: { subject: string }) => ({ Authorization: `Bearer ${tokenFor({ sub: u.subject })}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' });
      const mark = product.seen().length;
      // A forged X-Tenant-Permissions changes nothing: the decision asked for the permission.
      const refused = await send(port, 'POST', '/invoices', { ...as(plain), 'X-Tenant-Permissions': 'invoices:write' }, '{"amount":5}');
      expect({ status: refused.status, error: refused.headers['x-tenant-error'] }).toEqual({ status: 403, error: 'Access denied' });
      expect(seenSince(mark)).toEqual([]);
      const allowed = await send(port, 'POST', '/invoices', as(accountant), '{"amount":5}');
      expect(allowed.status).toBe(201);
      expect(JSON.parse(allowed.body)).toEqual({ tenant_id: tenant.id, amount: 5, created_by: accountant.id });
      // Elsewhere the plain member is still admitted, and a forged permissions header is dropped.
      const who = await send(port, 'GET', '/whoami', { ...as(plain), 'X-Tenant-Permissions': 'invoices:write' });
      expect(JSON.parse(who.body)).toMatchObject({ role: 'member', permissions: forwarded(['tenant:members:read']) });
    });

    it('a stranger, an unknown tenant and a bad token are refused with the service status; the product is never reached', async () => {
      const { tenant } = await tenantWithMember('member');
      const stranger = tokenFor({ sub: unique('stranger') });
      const forged = { 'X-Tenant-Id': tenant.id, 'X-Tenant-Role': 'admin' };
      const mark = product.seen().length;
      const cases: Array<[string, Record<string, string>, number, string]> = [
        ['stranger', { Authorization: `Bearer ${stranger}`, 'X-Tenant': tenant.slug }, 403, 'Access denied'],
        ['unknown tenant', { Authorization: `Bearer ${stranger}`, 'X-Tenant': unique('missing') }, 403, 'Tenant not found'],
        ['malformed X-Tenant', { Authorization: `Bearer ${stranger}`, 'X-Tenant': 'Not_A_Slug' }, 403, 'Invalid X-Tenant header format'],
        ['no tenant', { Authorization: `Bearer ${stranger}` }, 403, 'Missing X-Tenant header'],
        ['bad token', { Authorization: 'Bearer not-a-token', 'X-Tenant': tenant.slug }, 401, 'Unauthorized'],
        ['no token', { 'X-Tenant': tenant.slug }, 401, 'Unauthorized'],
      ];
      for (const [name, headers, status, error] of cases) {
        for (const method of ['GET', 'POST']) {
          const r = await send(port, method, '/whoami', { ...headers, ...forged });
          expect({ name, method, status: r.status, error: r.headers['x-tenant-error'] }).toEqual({ name, method, status, error });
        }
      }
      expect(seenSince(mark)).toEqual([]);
    });

    it("the decision gets a fixed URI: a product URL's ?role=admin never changes a member's decision", async () => {
      const { tenant, token } = await tenantWithMember('member');
      for (const query of ['?role=admin', '?page=2&role=admin', '?role=admin&role=member']) {
        const r = await send(port, 'GET', `/whoami${query}`, { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug });
        expect({ query, status: r.status }).toEqual({ query, status: 200 });
      }
    });

    it('a refusal reaches the client as the decision answered it: its JSON Error body with the detail, one WWW-Authenticate, one X-Tenant-Error', async () => {
      const { tenant } = await tenantWithMember('member');
      const cases: Array<[Record<string, string>, number, string]> = [
        [{ Authorization: 'Bearer not-a-token', 'X-Tenant': tenant.slug }, 401, 'Unauthorized'],
        [{ Authorization: `Bearer ${tokenFor({ sub: unique('stranger') })}`, 'X-Tenant': tenant.slug }, 403, 'Access denied'],
      ];
      for (const [headers, status, error] of cases) {
        const r = await send(port, 'GET', '/whoami', headers);
        expect({ status: r.status, type: r.headers['content-type'] }).toEqual({ status, type: expect.stringMatching(/^application\/json/) });
        const body = JSON.parse(r.body) as { error: string; detail: string };
        expect(body.error).toBe(error);
        expect(body.detail.length).toBeGreaterThan(10);
        expect(r.names.filter((n) => n === 'x-tenant-error')).toHaveLength(1);
        expect(r.names.filter((n) => n === 'www-authenticate')).toHaveLength(status === 401 ? 1 : 0);
      }
    });

    it("the client's own X-Forwarded-For never becomes its address at the service", async () => {
      const { tenant, token } = await tenantWithMember('member');
      const mark = service.logs.length;
      await send(port, 'GET', '/whoami', { Authorization: 'Bearer not-a-token', 'X-Tenant': tenant.slug, 'X-Forwarded-For': '198.51.100.77' });
      await send(port, 'GET', '/whoami', { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, 'X-Forwarded-For': '198.51.100.78' });
      const lines = service.logs.slice(mark).filter((l) => l.msg === 'request completed' && l.path === '/api/tenant/decision');
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(new Set(lines.map((l) => l.ip))).toEqual(new Set(['127.0.0.1']));
    });

    it('a member removed from the tenant is refused on the next request', async () => {
      const { tenant, user, token } = await tenantWithMember('member');
      const owner = await createUser(tenant.id, { role: 'admin' });
      const headers = { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug };
      expect((await send(port, 'GET', '/whoami', headers)).status).toBe(200);
      const removed = await send(servicePort, 'DELETE', `/api/tenant/members/${user.id}`, { Authorization: `Bearer ${tokenFor({ sub: owner.subject })}`, 'X-Tenant': tenant.slug });
      expect(removed.status).toBe(204);
      const mark = product.seen().length;
      const r = await send(port, 'GET', '/whoami', { ...headers, 'X-Tenant-Id': tenant.id, 'X-User-Id': user.id });
      expect({ status: r.status, error: r.headers['x-tenant-error'] }).toEqual({ status: 403, error: 'Access denied' });
      expect(seenSince(mark)).toEqual([]);
    });

    it('a member provisioned from a token claim reaches the product on first use', async () => {
      const tenant = await createTenant();
      const sub = unique('claimed');
      const r = await send(port, 'GET', '/whoami', { Authorization: `Bearer ${tokenFor({ sub, claims: { tenant: tenant.slug } })}` });
      expect(r.status).toBe(200);
      const row = await ownerConnection()('users').where({ tenant_id: tenant.id, subject: sub }).first('id');
      expect(JSON.parse(r.body)).toMatchObject({ tenantId: tenant.id, userId: row.id, role: 'member', subject: sub });
    });

    (gateway.name.startsWith('nginx') ? it : it.skip)('nginx keeps its pid, logs and temp files under its prefix, not the system nginx\'s', async () => {
      const { tenant, token } = await tenantWithMember('member');
      expect((await send(port, 'GET', '/whoami?from=prefix-test', { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug })).status).toBe(200);
      const pid = Number(fs.readFileSync(path.join(dir, 'nginx.pid'), 'utf8').trim());
      expect(pid).toBe(proxy.proc.pid);
      expect(fs.existsSync(path.join(dir, 'nginx-error.log'))).toBe(true);
      // nginx writes the access log line after it has answered: wait for it (bounded).
      expect(await waitForFileContaining(path.join(dir, 'nginx-access.log'), '/whoami?from=prefix-test')).toContain('/whoami?from=prefix-test');
      for (const temp of ['temp-client-body', 'temp-proxy']) expect(fs.statSync(path.join(dir, temp)).isDirectory()).toBe(true);
    });

    it('a subject that is not plain ASCII arrives percent-encoded and decodes to the token sub', async () => {
      const tenant = await createTenant();
      const subject = `zoë-${unique('s')}`;
      await createUser(tenant.id, { subject });
      const r = await send(port, 'GET', '/whoami', { Authorization: `Bearer ${tokenFor({ sub: subject })}`, 'X-Tenant': tenant.slug });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).subject).toBe(subject);
    });
  });
}

/** Every header the decision sets (or the product trusts): a client's own copy must never reach the product. */
const IDENTITY_HEADERS = ['X-Tenant-Id', 'X-Tenant-Slug', 'X-Tenant-Role', 'X-Tenant-Permissions', 'X-User-Id', 'X-User-Subject', 'X-User-Issuer', 'X-Tenant-Token', 'X-Tenant-Error'];

/**
 * A role of the tenant's own holding `permission` (put in the catalogue if absent; the
 * catalogue is platform-wide and shared by the suites): its key.
 */
async function tenantRoleWith(tenantId: string, permission: string): Promise<string> {
  const db = ownerConnection();
  await db('permissions').insert({ key: permission }).onConflict('key').ignore();
  const key = unique('accountant');
  await db('tenant_roles').insert({ tenant_id: tenantId, key, name: 'Accountant' });
  await db('tenant_role_permissions').insert({ tenant_id: tenantId, role_key: key, permission_key: permission });
  return key;
}

/** An ES256 key set served over HTTP, and at+jwt tokens in the shape of tenant tokens (docs/tenant-tokens.md#the-token). */
async function startTenantTokenIssuer() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = crypto.randomBytes(8).toString('hex');
  const jwk = { ...(publicKey.export({ format: 'jwk' }) as object), kid, alg: 'ES256', use: 'sig' };
  const server = http.createServer((req, res) => {
    if (req.url === '/.well-known/jwks.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (claims: Record<string, unknown>, opts: { typ?: string; expiresIn?: number; issuer?: string; audience?: string } = {}) =>
    jwt.sign(claims, privateKey, {
      algorithm: 'ES256',
      keyid: kid,
      header: { alg: 'ES256', typ: opts.typ ?? 'at+jwt', kid },
      expiresIn: opts.expiresIn ?? 300,
      issuer: opts.issuer ?? url,
      audience: opts.audience ?? 'tenant-service-products',
    });
  return { url, sign, close: () => new Promise((r) => server.close(r)) };
}

describe('the example product verifies tenant tokens (PRODUCT_AUTH=token)', () => {
  let issuer: Awaited<ReturnType<typeof startTenantTokenIssuer>>;
  let product: Awaited<ReturnType<typeof startProduct>>;

  beforeAll(async () => {
    issuer = await startTenantTokenIssuer();
    product = await startProduct({ PRODUCT_AUTH: 'token', TENANT_SERVICE_URL: issuer.url });
  }, 60_000);
  afterAll(async () => {
    await product?.stop();
    await issuer?.close();
  });

  const claims = () => ({
    sub: unique('user'),
    idp_iss: 'https://idp.example',
    tenant_id: crypto.randomUUID(),
    tenant_slug: unique('acme'),
    tenant_role: 'admin',
    user_id: crypto.randomUUID(),
    jti: crypto.randomUUID(),
  });

  it('accepts a tenant token as Bearer or X-Tenant-Token and reads its claims, not forged headers', async () => {
    const c = claims();
    const token = issuer.sign(c);
    const ways: Array<Record<string, string>> = [{ Authorization: `Bearer ${token}` }, { 'X-Tenant-Token': token }];
    for (const headers of ways) {
      const r = await send(product.port, 'GET', '/whoami', { ...headers, 'X-Tenant-Id': crypto.randomUUID(), 'X-Tenant-Role': 'owner' });
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toEqual({ tenantId: c.tenant_id, tenantSlug: c.tenant_slug, role: 'admin', permissions: [], userId: c.user_id, subject: c.sub, idpIssuer: 'https://idp.example', via: 'tenant-token' });
    }
  });

  it("checks a permission from the token's permissions claim", async () => {
    const c = claims();
    const holding = issuer.sign({ ...c, permissions: ['invoices:read', 'invoices:write'] });
    const lacking = issuer.sign({ ...c, permissions: ['invoices:read'] });
    const post = (token: string) => send(product.port, 'POST', '/invoices', { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'X-Tenant-Permissions': 'invoices:write' }, '{"amount":3}');
    expect((await post(holding)).status).toBe(201);
    expect((await post(lacking)).status).toBe(403);
    expect((await post(issuer.sign(c))).status).toBe(403); // no permissions claim: none
  });

  it('refuses an expired token, another audience or issuer, another typ, and no token', async () => {
    const c = claims();
    const refused = [
      issuer.sign(c, { expiresIn: -30 }),
      issuer.sign(c, { audience: 'another-product' }),
      issuer.sign(c, { issuer: 'https://elsewhere.example' }),
      issuer.sign(c, { typ: 'JWT' }),
      issuer.sign({ sub: c.sub }), // a signed token without the tenant claims
    ];
    for (const token of refused) expect((await send(product.port, 'GET', '/whoami', { Authorization: `Bearer ${token}` })).status).toBe(401);
    expect((await send(product.port, 'GET', '/whoami', { 'X-Tenant-Id': c.tenant_id, 'X-Tenant-Role': 'admin', 'X-User-Id': c.user_id })).status).toBe(401);
  });
});

describe("the example product verifies tenant-service's own tenant tokens (PRODUCT_AUTH=token)", () => {
  // Production timing scaled down: tokens live 2 s, instances reload the key set every 200 ms,
  // a rotated key signs 3 s after it is published, and the product keeps the key set for 1 s.
  let issuing: TestApp;
  let issuingServer: http.Server;
  let product: Awaited<ReturnType<typeof startProduct>>;

  const mintFor = async (token: string, slug: string): Promise<string> => {
    const r = await send((issuingServer.address() as AddressInfo).port, 'POST', '/api/tenant/token', { Authorization: `Bearer ${token}`, 'X-Tenant': slug });
    expect(r.status).toBe(200);
    return (JSON.parse(r.body) as { access_token: string }).access_token;
  };
  const whoami = (tenantToken: string) => send(product.port, 'GET', '/whoami', { Authorization: `Bearer ${tenantToken}` });

  beforeAll(async () => {
    issuing = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_TENANT_TOKEN_TTL: '2' }, { tenantTokenKeys: { refreshMs: 200, publishDelaySeconds: 3 } });
    issuingServer = http.createServer(issuing.app);
    await new Promise<void>((r) => issuingServer.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(issuingServer.address() as AddressInfo).port}`;
    product = await startProduct({ PRODUCT_AUTH: 'token', TENANT_SERVICE_URL: url, TENANT_TOKEN_ISSUER: issuing.config.tenantTokenIssuer, JWKS_CACHE_MAX_AGE_MS: '1000' });
  }, 120_000);
  afterAll(async () => {
    await product?.stop();
    if (issuingServer) {
      issuingServer.closeAllConnections();
      await new Promise((r) => issuingServer.close(r));
    }
    await issuing?.close();
  });

  it('a token from POST /api/tenant/token verifies in the product, and is refused once it has expired', async () => {
    const { tenant, user, token } = await tenantWithMember('admin');
    const tenantToken = await mintFor(token, tenant.slug);
    const r = await whoami(tenantToken);
    expect({ status: r.status, body: JSON.parse(r.body) as unknown }).toEqual({
      status: 200,
      body: expect.objectContaining({ tenantId: tenant.id, tenantSlug: tenant.slug, role: 'admin', userId: user.id, subject: user.subject, via: 'tenant-token' }),
    });
    // exp is whole seconds and jose allows no clock tolerance here: 3.5 s is past a 2 s token.
    await new Promise((res) => setTimeout(res, 3_500));
    expect((await whoami(tenantToken)).status).toBe(401);
  });

  it('a key rotation in the middle of a stream of verifications fails none', async () => {
    const { tenant, token } = await tenantWithMember('member');
    const statuses: number[] = [];
    const kids = new Set<string>();
    let rotated: { kid: string; previous_kid: string } | null = null;
    let afterSwitch = 0;
    for (let i = 0; afterSwitch < 15; i++) {
      if (i > 1000) throw new Error(`the new key never signed; kids seen: ${[...kids].join(', ')}`);
      if (i === 5) {
        const r = await send((issuingServer.address() as AddressInfo).port, 'POST', '/api/setup/tenant-token-keys/rotate', { Authorization: `Bearer ${adminToken()}` });
        expect(r.status).toBe(200);
        rotated = JSON.parse(r.body) as { kid: string; previous_kid: string };
      }
      const tenantToken = await mintFor(token, tenant.slug);
      const kid = (JSON.parse(Buffer.from(tenantToken.split('.')[0]!, 'base64url').toString('utf8')) as { kid: string }).kid;
      kids.add(kid);
      statuses.push((await whoami(tenantToken)).status);
      if (rotated && kid === rotated.kid) afterSwitch++;
      await new Promise((res) => setTimeout(res, 25));
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    // The stream began on an older key and ended on the rotated one (other suites share the
    // database's key set and may rotate it too, so no exact list of key ids is asserted).
    expect([...kids][0]).not.toBe(rotated!.kid);
    expect([...kids]).toContain(rotated!.kid);
  });
});

describe('the Traefik and Envoy snippets (not run here: no binaries in Debian 12)', () => {
  const DECISION_HEADERS = IDENTITY_HEADERS.filter((h) => h !== 'X-Tenant-Error');

  it("traefik.yml drops every client copy of the decision headers before forwardAuth copies them, and the client's Authorization after it", () => {
    const doc = yaml.load(fs.readFileSync(path.join(ROOT, 'examples', 'traefik.yml'), 'utf8')) as {
      http: { routers: { product: { middlewares: string[] } }; middlewares: Record<string, { headers?: { customRequestHeaders: Record<string, string> }; forwardAuth?: { address: string; authResponseHeaders: string[] } }> };
    };
    const { middlewares } = doc.http;
    expect(doc.http.routers.product.middlewares).toEqual(['strip-tenant-headers', 'tenant-decision', 'strip-authorization']);
    expect(middlewares['strip-authorization']!.headers!.customRequestHeaders).toEqual({ Authorization: '' });
    for (const h of [...DECISION_HEADERS, 'X-Tenant-Error']) expect(middlewares['strip-tenant-headers']!.headers!.customRequestHeaders[h]).toBe('');
    expect(middlewares['tenant-decision']!.forwardAuth!.address).toMatch(/\/api\/tenant\/decision$/);
    expect(middlewares['tenant-decision']!.forwardAuth!.authResponseHeaders).toEqual(DECISION_HEADERS);
    // The per-method pattern: writes on /invoices ask for invoices:write, with the same headers.
    const routers = doc.http.routers as unknown as Record<string, { rule: string; middlewares: string[] }>;
    expect(routers['invoices-write']).toMatchObject({ rule: expect.stringContaining('!Method(`GET`) && !Method(`HEAD`)'), middlewares: ['strip-tenant-headers', 'tenant-decision-invoices-write', 'strip-authorization'] });
    expect(middlewares['tenant-decision-invoices-write']!.forwardAuth).toEqual({ address: expect.stringMatching(/\/api\/tenant\/decision\?permission=invoices:write$/), authResponseHeaders: DECISION_HEADERS });
  });

  it('envoy.yaml removes the client copies before ext_authz and sets those the decision answered', () => {
    const text = fs.readFileSync(path.join(ROOT, 'examples', 'envoy.yaml'), 'utf8');
    yaml.load(text);
    const filters = [...text.matchAll(/- name: (envoy\.filters\.http\.[a-z_]+)/g)].map((m) => m[1]);
    expect(filters).toEqual(['envoy.filters.http.header_mutation', 'envoy.filters.http.ext_authz', 'envoy.filters.http.header_mutation', 'envoy.filters.http.router']);
    // The client's token stops at the gateway: removed after ext_authz has sent it to the decision.
    expect(text.indexOf('- remove: authorization')).toBeGreaterThan(text.indexOf('envoy.filters.http.ext_authz'));
    for (const h of DECISION_HEADERS) {
      expect(text).toContain(`- remove: ${h.toLowerCase()}`);
      expect(text).toContain(`- exact: ${h.toLowerCase()}`);
    }
    expect(text).toContain('path_prefix: "/api/tenant/decision?path="');
  });
});
