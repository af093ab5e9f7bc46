/**
 * The console in a real browser: Debian's chromium driven by playwright-core, against the real
 * app listening on a spare port. Each person gets their own browser context (their own
 * sessionStorage), signs in with a `tenantctl console`-style link (a one-time code in the URL
 * fragment, made from their token by the service), and every page they see is checked by axe-core and photographed into
 * test-output/console/.
 *
 * Suites skip only when /usr/bin/chromium is absent; .ci/run installs it, so CI always runs them.
 */
import fs from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../../bench/scenarios/chromium';
import { createTenant, createUser, tokenFor, type TenantFixture, type UserFixture } from './factories';
import { startTestApp, type TestApp } from './app';
import { buildOnce, ROOT } from './server-process';

export { CHROMIUM, HAVE_CHROMIUM, launchChromium };

export const SCREENSHOT_DIR = path.join(ROOT, 'test-output', 'console');

/** `it`, or `it.skip` with a note on stderr when chromium is missing. */
export function browserIt(suite: string): jest.It {
  if (!HAVE_CHROMIUM) {
    process.stderr.write(`${suite}: SKIPPED, ${CHROMIUM} not found (install it with: apt-get install -y chromium)\n`);
    return it.skip;
  }
  return it;
}

export interface ConsoleHarness {
  t: TestApp;
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * The app (with `env` over the test defaults) listening on 127.0.0.1, and a browser. `env` may
 * be a function of the base URL, for settings that must name it before the app exists (an
 * OpenID provider's redirect URI, SERVICE_FRONTEND_BASE_URL = `${base}/console`): the port is
 * bound first, the app attached to it after.
 */
export async function startConsoleHarness(
  env: Record<string, string | undefined> | ((base: string) => Promise<Record<string, string | undefined>> | Record<string, string | undefined>) = {},
): Promise<ConsoleHarness> {
  // The console (and the service) rebuilt when a source changed, once per test run: workers wait
  // for one build instead of replacing dist/console under each other.
  await buildOnce();
  const server: Server = http.createServer();
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let t: TestApp;
  try {
    t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', ...(typeof env === 'function' ? await env(base) : env) });
  } catch (err) {
    server.close();
    throw err;
  }
  server.on('request', t.app);
  // Without Chromium the suite's tests are skipped (browserIt), but its beforeAll still runs.
  const browser = HAVE_CHROMIUM ? await launchChromium() : absentBrowser();
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  return {
    t,
    base,
    browser,
    async close() {
      await browser.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

/** Stands in for Chromium when it is not installed: closing works, anything else says why not. */
function absentBrowser(): Browser {
  return new Proxy({} as Browser, {
    get(_target, prop) {
      if (prop === 'close') return async () => {};
      throw new Error(`${CHROMIUM} is not installed (apt-get install -y chromium): browser.${String(prop)} is unavailable`);
    },
  });
}

/** One person's tab, with what went wrong in it recorded. */
export interface ConsoleTab {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors, CSP violations, failed requests and requests that left 127.0.0.1. */
  problems: string[];
  close(): Promise<void>;
}

/**
 * A sign-in link for `token`, as `tenantctl console` makes one: the service's one-time code for
 * the token (POST /api/console/codes with it as the bearer) in the fragment of `/console<path>`.
 */
export async function signInLink(base: string, token: string, opts: { path?: string; tenant?: string; expiresIn?: number } = {}): Promise<string> {
  const res = await fetch(`${base}/api/console/codes`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(opts.expiresIn ? { expires_in: opts.expiresIn } : {}),
  });
  if (res.status !== 201) throw new Error(`POST /api/console/codes answered ${res.status}: ${await res.text()}`);
  const made = (await res.json()) as { code: string; expires_at: string };
  const fragment = new URLSearchParams({ code: made.code, expires: String(Math.floor(Date.parse(made.expires_at) / 1000)), ...(opts.tenant ? { tenant: opts.tenant } : {}) });
  return `${base}/console${opts.path ?? '/'}#${fragment.toString()}`;
}

/**
 * A fresh browser context (its own sessionStorage) on `path` of the console. With `token`, the
 * person arrives through a sign-in link (`signInLink`). `allowOrigins` lets the tab reach other
 * local servers (an OpenID provider).
 */
export async function openConsole(
  h: Pick<ConsoleHarness, 'base' | 'browser'>,
  opts: { path?: string; token?: string; tenant?: string; allowOrigins?: string[]; clipboard?: boolean } = {},
): Promise<ConsoleTab> {
  const context = await h.browser.newContext({ viewport: { width: 1280, height: 900 } });
  // With `clipboard`, the page may write the clipboard and the test read it back (clipboardText).
  if (opts.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.base });
  const page = await context.newPage();
  const problems: string[] = [];
  const allowed = [h.base, ...(opts.allowOrigins ?? [])];
  page.on('console', (m) => {
    if (m.type() === 'error' && !isExpectedHttpError(m.text())) problems.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    const err = r.failure()?.errorText ?? '';
    // A navigation away cancels the requests still in flight: that is not a fault.
    if (!/ERR_ABORTED/.test(err)) problems.push(`request failed: ${r.url()} (${err})`);
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || allowed.some((o) => url === o || url.startsWith(`${o}/`))) return route.continue();
    problems.push(`request outside the allowed origins: ${url}`);
    return route.abort('blockedbyclient');
  });
  await page.goto(opts.token ? await signInLink(h.base, opts.token, { path: opts.path, tenant: opts.tenant }) : `${h.base}/console${opts.path ?? '/'}`);
  return { context, page, problems, close: () => context.close() };
}

/** A fresh tenant, one admin of it, and the admin's tab on `path` of the console with that tenant chosen. */
export async function openAsTenantAdmin(
  h: Pick<ConsoleHarness, 'base' | 'browser'>,
  path: string,
  opts: { clipboard?: boolean } = {},
): Promise<{ tenant: TenantFixture; admin: UserFixture; token: string; tab: ConsoleTab }> {
  const tenant = await createTenant();
  const admin = await createUser(tenant.id, { role: 'admin' });
  const token = tokenFor({ sub: admin.subject, email: admin.email });
  const tab = await openConsole(h, { token, tenant: tenant.slug, path, clipboard: opts.clipboard });
  return { tenant, admin, token, tab };
}

/** What the page's last copy put on the clipboard (a tab opened with `clipboard: true`). */
export function clipboardText(page: Page): Promise<string> {
  return page.evaluate('navigator.clipboard.readText()') as Promise<string>;
}

/**
 * Chromium logs every non-2xx fetch as "Failed to load resource: the server responded with a
 * status of 4xx": those are answers the console shows as sentences (a refusal, a conflict), not
 * faults of the page.
 */
function isExpectedHttpError(text: string): boolean {
  return /^Failed to load resource: the server responded with a status of 4\d\d/.test(text);
}

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  targets: string[];
}

/**
 * Runs axe-core in the page (evaluated through the DevTools protocol, so the page's CSP, which
 * refuses inline script, does not block it) and returns its serious and critical findings.
 */
export async function axeFindings(page: Page): Promise<AxeFinding[]> {
  const loaded = await page.evaluate('typeof window.axe !== "undefined"');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const findings = (await page.evaluate(`window.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact || '', help: v.help, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
  })))`)) as AxeFinding[];
  return findings.filter((f) => f.impact === 'serious' || f.impact === 'critical');
}

/** Fails with a readable list when axe-core finds a serious or critical violation. */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const findings = await axeFindings(page);
  if (findings.length) {
    throw new Error(`axe-core on ${label}:\n${findings.map((f) => `  ${f.impact} ${f.id}: ${f.help} (${f.targets.join(', ')})`).join('\n')}`);
  }
}

/** A full-page screenshot in test-output/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Checks a page the way every console test does: axe-core, then a screenshot. */
export async function checkPage(page: Page, name: string): Promise<void> {
  await expectAccessible(page, name);
  await screenshot(page, name);
}
