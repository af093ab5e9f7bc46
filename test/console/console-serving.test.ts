/**
 * How the service serves the console (src/http/console.ts), over HTTP without a browser: the
 * page with this instance's settings, the hashed assets, the errors, the CSP shared with /docs,
 * an installation without a built console, and the settings refused at boot.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import request from 'supertest';
import { loadConfig } from '../../src/config';
import { consoleBuildDir, consoleStage, createConsoleRouter } from '../../src/http/console';
import { closeOwnerConnection } from '../helpers/factories';
import { startTestApp, testEnv, type TestApp } from '../helpers/app';
import { buildOnce } from '../helpers/server-process';
import { cspDirectives } from '../helpers/csp';

const ISSUER = 'https://login.example.test/realms/acme';
let local: TestApp;
let oidc: TestApp;

beforeAll(async () => {
  await buildOnce();
  local = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  oidc = await startTestApp({
    SERVICE_OIDC_ISSUER: ISSUER,
    SERVICE_CONSOLE_CLIENT_ID: 'tenant-console',
    SERVICE_CONSOLE_RESOURCE: 'urn:tenant-api',
    SERVICE_JWT_SECRET: 'a-secret-that-must-never-reach-the-page-0123456789',
    SERVICE_AUTH_PROVIDER: 'oidc',
  });
}, 120_000);
afterAll(async () => {
  await local?.close();
  await oidc?.close();
  await closeOwnerConnection();
});

function settingsOf(html: string): Record<string, unknown> {
  const m = /<script type="application\/json" id="console-config">(.*?)<\/script>/s.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(m![1]!) as Record<string, unknown>;
}

function firstAsset(html: string, ext: string): string {
  const m = new RegExp(`/console/assets/([\\w.-]+\\.${ext})`).exec(html);
  expect(m).not.toBeNull();
  return m![0];
}

describe('the page', () => {
  it.each(['/console', '/console/', '/console/admin/tenants', '/console/callback?code=x&state=y'])('%s is index.html with the settings, revalidated on every visit', async (p) => {
    const r = await request(local.app).get(p).expect(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.text).toContain('<div id="root">');
    // No external provider for the console: the service's own, with the console's built-in client.
    expect(settingsOf(r.text)).toEqual({
      oidc: { issuer: `${local.config.tenantTokenIssuer}/oidc`, clientId: 'tenant-service-console', scopes: 'openid email profile offline_access', resource: `${local.config.tenantTokenIssuer}/api`, audience: null, own: true },
      authProvider: 'local',
      multiTenantMode: true,
    });
  });

  it('with OIDC sign-in, the settings name the provider and the client, and nothing secret', async () => {
    const r = await request(oidc.app).get('/console/').expect(200);
    expect(settingsOf(r.text)).toEqual({
      oidc: { issuer: ISSUER, clientId: 'tenant-console', scopes: 'openid profile email', resource: 'urn:tenant-api', audience: null, own: false },
      authProvider: 'oidc',
      multiTenantMode: false,
    });
    expect(r.text).not.toContain('a-secret-that-must-never-reach-the-page');
  });

  it('has the CSP of /docs, plus the issuer origin in connect-src only when an external provider is configured for the console', async () => {
    const docs = cspDirectives((await request(local.app).get('/docs').expect(200)).headers['content-security-policy']);
    const plain = cspDirectives((await request(local.app).get('/console/').expect(200)).headers['content-security-policy']);
    expect(plain).toEqual(docs);
    expect(plain.has('connect-src')).toBe(false);
    const withIssuer = cspDirectives((await request(oidc.app).get('/console/').expect(200)).headers['content-security-policy']);
    expect(withIssuer.get('connect-src')).toBe("'self' https://login.example.test");
    withIssuer.delete('connect-src');
    expect(withIssuer).toEqual(docs);
  });

  it('POST /console is 405 with Allow, in the error body', async () => {
    const r = await request(local.app).post('/console').send({}).expect(405);
    expect(r.headers.allow).toBe('GET, HEAD');
    expect(r.body).toMatchObject({ error: 'Method not allowed' });
    expect(typeof r.body.detail).toBe('string');
  });
});

describe('the assets', () => {
  it('a hashed script is cached for a year and sent gzipped', async () => {
    const page = await request(local.app).get('/console/').expect(200);
    const script = firstAsset(page.text, 'js');
    const r = await request(local.app).get(script).set('Accept-Encoding', 'gzip').expect(200);
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const css = await request(local.app).get(firstAsset(page.text, 'css')).expect(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('an unknown asset is 404 in the error body', async () => {
    const r = await request(local.app).get('/console/assets/nothing-here-0000.js').expect(404);
    expect(r.body).toMatchObject({ error: 'Not found' });
    expect(r.body.detail).toContain('/console/assets/nothing-here-0000.js');
  });

  it.each(['/console/../package.json', '/console/assets/../../package.json', '/console/assets/..%2f..%2fpackage.json', '/console/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json', '/console/%2e%2e/package.json'])(
    '%s (sent as is) serves nothing from outside the build directory',
    async (p) => {
      const r = await rawGet(p);
      expect(r.body).not.toContain('"devDependencies"');
      if (r.status === 200) expect(r.body).toContain('id="console-config"');
      else expect(r.status).toBe(404);
    },
  );
});

/** A GET with the path exactly as given (supertest and fetch would resolve its dot segments). */
async function rawGet(p: string): Promise<{ status: number; body: string }> {
  const server = http.createServer(local.app).listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  try {
    return await new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: p }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

describe('an installation without a built console', () => {
  it('answers 503 with a page saying how to build it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-unbuilt-'));
    try {
      const app = express();
      app.use(consoleStage(createConsoleRouter(local.config, dir)));
      const r = await request(app).get('/console/').expect(503);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.text).toContain('npm run build');
      expect(r.text).toContain(dir);
      await request(app).get('/console/admin/tenants').expect(503);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the real build directory is dist/console', () => {
    expect(path.relative(process.cwd(), consoleBuildDir())).toBe(path.join('dist', 'console'));
  });
});

describe('settings refused at boot', () => {
  it('SERVICE_CONSOLE_CLIENT_ID without SERVICE_OIDC_ISSUER names the variable', () => {
    expect(() => loadConfig(testEnv({ SERVICE_CONSOLE_CLIENT_ID: 'tenant-console' }))).toThrow(/SERVICE_CONSOLE_CLIENT_ID: needs SERVICE_OIDC_ISSUER/);
  });

  it('SERVICE_CONSOLE_RESOURCE must be an absolute URI and needs the client', () => {
    expect(() => loadConfig(testEnv({ SERVICE_OIDC_ISSUER: ISSUER, SERVICE_CONSOLE_CLIENT_ID: 'c', SERVICE_CONSOLE_RESOURCE: 'tenant api' }))).toThrow(/SERVICE_CONSOLE_RESOURCE: expected an absolute URI/);
    expect(() => loadConfig(testEnv({ SERVICE_OIDC_ISSUER: ISSUER, SERVICE_CONSOLE_AUDIENCE: 'https://api.example.test' }))).toThrow(/SERVICE_CONSOLE_AUDIENCE: needs SERVICE_CONSOLE_CLIENT_ID/);
  });

  it("SERVICE_CONSOLE_SCOPES must include 'openid'", () => {
    expect(() => loadConfig(testEnv({ SERVICE_OIDC_ISSUER: ISSUER, SERVICE_CONSOLE_CLIENT_ID: 'c', SERVICE_CONSOLE_SCOPES: 'profile email' }))).toThrow(/SERVICE_CONSOLE_SCOPES/);
  });
});
