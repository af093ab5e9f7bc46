/**
 * /openapi.json, /openapi.yaml, /docs and its assets over HTTP (supertest). The page itself is
 * exercised in a real browser by docs-browser.test.ts.
 */
import yaml from 'js-yaml';
import request from 'supertest';
import { loadOpenApiDocument } from '../../src/openapi-document';
import { adminToken, closeOwnerConnection } from '../helpers/factories';
import { startTestApp, type TestApp } from '../helpers/app';
import { cspDirectives } from '../helpers/csp';

let t: TestApp;
let proxied: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_RATE_LIMIT_ENABLED: 'true' });
  proxied = await startTestApp({ SERVICE_TRUST_PROXY: 'true' });
});
afterAll(async () => {
  await t.close();
  await proxied.close();
  await closeOwnerConnection();
});

/** Buffers a binary body without letting superagent decompress it. */
function raw(res: request.Response, cb: (err: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.on('data', (c: Buffer) => chunks.push(c));
  res.on('end', () => cb(null, Buffer.concat(chunks)));
}

describe('GET /openapi.json and /openapi.yaml', () => {
  it('serves the contract without a token, with servers set to the URL the caller used', async () => {
    const r = await request(t.app).get('/openapi.json').set('Host', 'api.example.test:8443').expect(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
    const expected = loadOpenApiDocument();
    expect(r.body.openapi).toBe('3.0.3');
    expect(r.body.paths).toEqual(expected.paths);
    expect(r.body.components).toEqual(expected.components);
    expect(r.body.servers).toEqual([{ url: 'http://api.example.test:8443', description: 'This instance' }]);
  });

  it("renders each operation's x-access and x-rate-limit in its description (shown by /docs)", async () => {
    const r = await request(t.app).get('/openapi.json').expect(200);
    const create = r.body.paths['/api/setup/tenant'].post;
    expect(create['x-access']).toBe('platformAdmin');
    expect(create.description).toContain('**Access** (`x-access: platformAdmin`): platform admins only.');
    expect(create.description).toContain('**Rate limit** (`x-rate-limit`): 10 requests per hour per caller (per client address without a valid token), counter `setup-create`.');
    expect(r.body.paths['/healthz'].get.description).toContain('**Rate limit**: none.');
    expect(r.body.paths['/api/tenant/events'].get.description).toContain("**Permission** (`x-permission`): the caller's role holds `tenant:events:read`");
    for (const item of Object.values(r.body.paths as Record<string, Record<string, { description?: string }>>)) {
      for (const op of Object.values(item).filter((o) => typeof o === 'object' && o !== null && 'operationId' in o)) expect(op.description).toMatch(/\*\*Access\*\* \(`x-access: \w+`\)/);
    }
  });

  it('serves the same document as YAML', async () => {
    const r = await request(t.app).get('/openapi.yaml').set('Host', '127.0.0.1:9999').buffer(true).parse(raw).expect(200);
    expect(r.headers['content-type']).toBe('application/yaml; charset=utf-8');
    const doc = yaml.load((r.body as Buffer).toString('utf8')) as Record<string, unknown>;
    const json = await request(t.app).get('/openapi.json').set('Host', '127.0.0.1:9999').expect(200);
    expect(doc).toEqual(json.body);
    expect(doc.servers).toEqual([{ url: 'http://127.0.0.1:9999', description: 'This instance' }]);
  });

  it('ignores X-Forwarded-Proto/Host unless SERVICE_TRUST_PROXY is on', async () => {
    const direct = await request(t.app)
      .get('/openapi.json')
      .set('Host', 'internal:8080')
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'api.example.com')
      .expect(200);
    expect(direct.body.servers[0].url).toBe('http://internal:8080');

    const behindProxy = await request(proxied.app)
      .get('/openapi.json')
      .set('Host', 'internal:8080')
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'api.example.com, other.example.com')
      .expect(200);
    expect(behindProxy.body.servers[0].url).toBe('https://api.example.com');
  });

  it('does not echo a malformed Host into the document', async () => {
    const r = await request(t.app).get('/openapi.json').set('Host', 'evil.example/"><script>').expect(200);
    expect(r.body.servers[0].url).toBe(`http://${t.config.host}:${t.config.port}`);
  });

  it('is not rate-limited (no rate-limit headers even with limits on) and ignores a bad token', async () => {
    const r = await request(t.app).get('/openapi.json').set('Authorization', 'Bearer not-a-jwt').expect(200);
    expect(Object.keys(r.headers).filter((h) => /ratelimit/i.test(h))).toEqual([]);
    // The same app does limit /api, so the absence above is the docs router's doing.
    const api = await request(t.app).get('/api/setup/status').set('Authorization', `Bearer ${adminToken()}`);
    expect(Object.keys(api.headers).some((h) => /ratelimit/i.test(h))).toBe(true);
  });

  it('answers 405 with Allow for other methods, HEAD without a body', async () => {
    const post = await request(t.app).post('/openapi.json').expect(405);
    expect(post.headers.allow).toBe('GET, HEAD');
    expect(post.body.error).toBe('Method not allowed');
    const head = await request(t.app).head('/openapi.yaml').expect(200);
    expect(head.headers['content-type']).toBe('application/yaml; charset=utf-8');
    expect(head.text ?? '').toBe('');
  });
});

describe('GET /docs', () => {
  it('serves a page that loads only its own assets and embeds a Scalar configuration with nothing remote', async () => {
    const r = await request(t.app).get('/docs').expect(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    const html = r.text;
    const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((m) => m[1]);
    const srcs = scripts.map((a) => /src="([^"]+)"/.exec(a)?.[1]).filter(Boolean);
    expect(srcs).toEqual([expect.stringMatching(/^\/docs\/assets\/standalone\.js\?v=\d+\.\d+\.\d+$/), '/docs/assets/init.js']);
    // The only inline <script> is JSON data, which CSP does not execute.
    expect(scripts.filter((a) => !/src=/.test(a))).toEqual([' id="scalar-configuration" type="application/json"']);
    expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);

    const json = /<script id="scalar-configuration" type="application\/json">([^<]*)<\/script>/.exec(html)?.[1];
    const config = JSON.parse(json!) as Record<string, unknown>;
    expect(config).toMatchObject({
      url: '/openapi.json',
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      hideClientButton: true,
      authentication: { preferredSecurityScheme: 'bearerAuth' },
    });
    expect(config).not.toHaveProperty('proxyUrl');
    expect(config).not.toHaveProperty('proxy');
  });

  it("keeps helmet's CSP (no inline script, no eval), allows no remote font/style, drops upgrade-insecure-requests only on plain HTTP", async () => {
    const page = cspDirectives((await request(t.app).get('/docs').expect(200)).headers['content-security-policy']);
    expect(page.get('script-src')).toBe("'self'");
    expect(page.get('script-src-attr')).toBe("'none'");
    expect(page.get('default-src')).toBe("'self'");
    expect(page.get('object-src')).toBe("'none'");
    expect(page.has('connect-src')).toBe(false); // falls back to default-src 'self'
    expect(page.has('upgrade-insecure-requests')).toBe(false);

    // No remote font or stylesheet either (helmet's global policy allows https: for those).
    expect(page.get('font-src')).toBe("'self' data:");
    expect(page.get('style-src')).toBe("'self' 'unsafe-inline'");

    const global = cspDirectives((await request(t.app).get('/healthz').expect(200)).headers['content-security-policy']);
    expect(global.has('upgrade-insecure-requests')).toBe(true);
    const changed = ['upgrade-insecure-requests', 'font-src', 'style-src'];
    expect([...page.entries()].filter(([k]) => !changed.includes(k))).toEqual([...global.entries()].filter(([k]) => !changed.includes(k)));

    const overHttps = cspDirectives(
      (await request(proxied.app).get('/docs').set('X-Forwarded-Proto', 'https').expect(200)).headers['content-security-policy'],
    );
    expect(overHttps.has('upgrade-insecure-requests')).toBe(true);
  });

  it('answers /docs/ too, and a JSON 404 for an unknown /docs path', async () => {
    await request(t.app).get('/docs/').expect(200);
    const r = await request(t.app).get('/docs/nope').expect(404);
    expect(r.body.error).toBe('Not found');
  });

  it('still checks the X-Tenant format on /docs like on any endpoint', async () => {
    const r = await request(t.app).get('/docs').set('X-Tenant', 'Bad_Slug').expect(400);
    expect(r.body.error).toBe('Invalid X-Tenant header format');
  });
});

describe('/docs/assets', () => {
  it('serves the Scalar bundle gzipped, cacheable for a year under its versioned URL, with an ETag', async () => {
    const page = await request(t.app).get('/docs').expect(200);
    const src = /src="(\/docs\/assets\/standalone\.js\?v=[^"]+)"/.exec(page.text)![1];

    const r = await request(t.app).get(src).set('Accept-Encoding', 'gzip').buffer(true).parse(raw).expect(200);
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(r.headers.vary).toMatch(/Accept-Encoding/);
    // superagent has already gunzipped the body; the header says it travelled compressed.
    const js = (r.body as Buffer).toString('utf8');
    expect(js).toContain('createApiReference');
    expect(js.length).toBeGreaterThan(1_000_000);
    expect(Number(r.headers['content-length'])).toBeLessThan(js.length / 2);

    const etag = r.headers.etag;
    expect(etag).toMatch(/^"[^"]+"$/);
    await request(t.app).get(src).set('If-None-Match', etag).expect(304);

    const identity = await request(t.app).get('/docs/assets/standalone.js').set('Accept-Encoding', 'identity').buffer(true).parse(raw).expect(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect((identity.body as Buffer).toString('utf8')).toBe(js);
    // Without the version the URL may change content on upgrade, so it must be revalidated.
    expect(identity.headers['cache-control']).toBe('no-cache');
  });

  it('serves init.js, which starts Scalar from the embedded configuration', async () => {
    const r = await request(t.app).get('/docs/assets/init.js').buffer(true).parse(raw).expect(200);
    expect(r.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const body = (r.body as Buffer).toString('utf8');
    expect(body).toContain("getElementById('scalar-configuration')");
    expect(body).toContain('Scalar.createApiReference');
  });
});
