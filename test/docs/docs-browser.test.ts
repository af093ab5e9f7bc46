/**
 * /docs in a real browser: Debian's chromium driven by playwright-core (no browser download),
 * against a listening server. The page must render the setup and registration operations, log no
 * console error, fetch nothing from outside 127.0.0.1, and let a user paste a bearer token and an
 * X-Tenant value and send a request. Screenshots go to test-output/ (git-ignored).
 *
 * Skipped only when /usr/bin/chromium is absent; .ci/run installs it, so CI always runs it.
 */
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../../bench/scenarios/chromium';
import { loadOpenApiDocument } from '../../src/openapi-document';
import { closeOwnerConnection, tenantWithMember } from '../helpers/factories';
import { startTestApp, type TestApp } from '../helpers/app';
import { contractProblem } from '../helpers/contract';

const OUTPUT_DIR = path.join(__dirname, '..', '..', 'test-output');
const TIMEOUT = 360_000;
/** The bound of each wait in the page (the default of every locator action and wait). */
const WAIT_BOUND = 90_000;

if (!HAVE_CHROMIUM) {
  process.stderr.write(`docs-browser.test.ts: SKIPPED, ${CHROMIUM} not found (install it with: apt-get install -y chromium)\n`);
}
const browserIt = HAVE_CHROMIUM ? it : it.skip;

/** The setup and registration operations (docs/tenants.md#tenant-administration, docs/tenants.md#self-service-registration), by operationId; their titles on the page come from openapi.yaml. */
const SPEC_OPERATIONS = [
  'getSetupStatus',
  'createTenant',
  'listTenants',
  'getTenant',
  'updateTenant',
  'deleteTenant',
  'getRegistrationStatus',
  'registerTenant',
];

function summaries(operationIds: readonly string[]): string[] {
  const doc = loadOpenApiDocument() as { paths: Record<string, Record<string, { operationId?: string; summary?: string }>> };
  const byId = new Map<string, string>();
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) if (op?.operationId && op.summary) byId.set(op.operationId, op.summary);
  }
  return operationIds.map((id) => {
    const summary = byId.get(id);
    if (!summary) throw new Error(`openapi.yaml has no summary for ${id}`);
    return summary;
  });
}

/** Matches an accessible name that starts with `summary` as a whole phrase ("Get tenant", not "Get tenants"). */
function titled(summary: string): RegExp {
  return new RegExp(`^${summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:\\s|$)`);
}

/** The sidebar entry of an operation: a link or a button, depending on the Scalar version. */
function sidebarEntry(page: Page, summary: string) {
  const name = titled(summary);
  // Visible ones only: the content area also holds a collapsed copy of a long tag's operations.
  return page.getByRole('link', { name }).or(page.getByRole('button', { name })).filter({ visible: true }).first();
}

let t: TestApp;
let server: Server;
let base: string;
let browser: Browser | null = null;

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return;
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchChromium();
  fs.mkdirSync(OUTPUT_DIR, { recursive: true });
}, TIMEOUT);

afterAll(async () => {
  if (!HAVE_CHROMIUM) return;
  await browser?.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
  await closeOwnerConnection();
}, TIMEOUT);

/** A page that records console errors, page errors and every request, and blocks anything not on 127.0.0.1. */
async function openPage(): Promise<{ page: Page; requests: string[]; blocked: string[]; errors: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1400, height: 1000 } });
  // Every wait of the page is for a condition; its bound only guards against a hang. Scalar
  // renders the long document for tens of seconds on a busy machine, so the bound is generous.
  page.setDefaultTimeout(WAIT_BOUND);
  const requests: string[] = [];
  const blocked: string[] = [];
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console.error: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    if (!blocked.includes(r.url())) errors.push(`request failed: ${r.url()} (${r.failure()?.errorText})`);
  });
  page.on('request', (r) => requests.push(r.url()));
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${base}/`) || url.startsWith('data:')) return route.continue();
    blocked.push(url);
    return route.abort('blockedbyclient');
  });
  return { page, requests, blocked, errors };
}

/** Nothing was blocked, every request went to 127.0.0.1, and the console logged no error. */
function expectStayedLocalAndClean(seen: { requests: readonly string[]; blocked: readonly string[]; errors: readonly string[] }): void {
  expect(seen.blocked).toEqual([]);
  expect(outsideRequests(seen.requests)).toEqual([]);
  expect(seen.errors).toEqual([]);
}

function outsideRequests(requests: readonly string[]): string[] {
  return requests.filter((u) => {
    if (u.startsWith('data:') || u.startsWith('blob:')) return false;
    return new URL(u).hostname !== '127.0.0.1';
  });
}

browserIt(
  'renders the API reference from /openapi.json with the setup and registration operations, no console error, nothing fetched from outside; a pasted bearer token and X-Tenant value go with a request sent from the page',
  async () => {
    const { page, requests, blocked, errors } = await openPage();
    const expected = summaries(SPEC_OPERATIONS);
    try {
      const response = await page.goto(`${base}/docs`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      // The reference is rendered once the document's title and the first of those operations show up.
      await page.getByRole('heading', { name: 'tenant-service' }).first().waitFor();
      // Scalar renders the rest of a long document after its first frame: let it settle first.
      await page.waitForLoadState('networkidle');
      // Each one is a sidebar entry titled by its summary (its accessible name adds the method).
      // Scalar re-renders the sidebar while it loads a long document, so each entry is looked up
      // afresh until it shows (a locator's own wait can hold on to a node that went away).
      for (const summary of expected) {
        const ends = Date.now() + WAIT_BOUND;
        while (!(await sidebarEntry(page, summary).isVisible().catch(() => false))) {
          if (Date.now() > ends) throw new Error(`no visible sidebar entry '${summary}'`);
          await page.waitForTimeout(100);
        }
      }
      // The server the page shows is this instance, taken from the served document.
      await page.getByText(base, { exact: true }).first().waitFor();
      // Let late requests (fonts, telemetry, lazy chunks) happen before judging.
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: path.join(OUTPUT_DIR, 'docs.png') });
      // The "Open API Client" button leads to client.scalar.com; it is configured away.
      expect(await page.getByText('Open API Client').count()).toBe(0);

      expect(requests).toEqual(expect.arrayContaining([`${base}/docs`, `${base}/openapi.json`]));
      expect(requests.some((u) => u.startsWith(`${base}/docs/assets/standalone.js`))).toBe(true);
      expectStayedLocalAndClean({ requests, blocked, errors });

      // The same page, as a user goes on: paste a bearer token and an X-Tenant value and send a
      // request (one rendering of the long document serves both halves).
      const { tenant, token } = await tenantWithMember('member');
      // The Authentication box of the introduction (bearerAuth) is shared by every operation.
      await page.getByPlaceholder('Token').first().fill(token);

      // Operations render lazily: scroll to "Get the resolved tenant", then open its client.
      await sidebarEntry(page, summaries(['getCurrentTenant'])[0]!).click();
      await page
        .locator('button')
        .filter({ hasText: /^Test Request\s*\(get \/api\/tenant\)$/ })
        .click();
      const client = page.getByRole('dialog');
      await client.waitFor();

      // The X-Tenant header parameter has its own row; replace the example value with our slug.
      // (Scalar ≥1.47 names the cells' comboboxes Key and Value; 1.46 has unnamed editor textboxes.)
      const tenantRow = client
        .locator('tr')
        .filter({ has: page.getByRole('combobox', { name: 'Key' }).filter({ hasText: /^X-Tenant$/ }) })
        .or(client.locator('tr').filter({ has: page.getByRole('textbox').filter({ hasText: /^X-Tenant$/ }) }))
        .first();
      const value = tenantRow.getByRole('combobox', { name: 'Value' }).or(tenantRow.getByRole('textbox').nth(1));
      await value.click();
      // Select the example value and type over it (fill() appends in Scalar 1.46's editor cells).
      await value.press('Control+a');
      await page.keyboard.insertText(tenant.slug);
      // The editor cell commits its text to the request on its own schedule: wait until the row
      // shows the slug, then leave the cell, before sending (a send right away could go without it).
      await tenantRow.getByText(tenant.slug).first().waitFor();
      await value.press('Tab');
      // Scalar 1.46 sends an optional parameter's row only once its checkbox is ticked.
      const enabled = tenantRow.getByRole('checkbox');
      if ((await enabled.count()) > 0) {
        for (let i = 0; i < 50 && !(await enabled.first().isChecked()); i++) {
          await enabled.first().check().catch(() => undefined);
          if (!(await enabled.first().isChecked())) await page.waitForTimeout(100);
        }
      }

      const send = () =>
        Promise.all([
          page.waitForRequest((r) => r.url() === `${base}/api/tenant`),
          page.waitForResponse((r) => r.url() === `${base}/api/tenant`),
          client.getByRole('button', { name: /^Send\b.*\/api\/tenant$/ }).click(),
        ]);
      // The editor commits the row to the request after a pause of its own (a send right away
      // leaves without the header on an idle machine): let it settle, and should a send still
      // go without the header, tick the row again and resend, a few times at most.
      await page.waitForTimeout(1500);
      let [apiRequest, apiResponse] = await send();
      let resends = 0;
      for (; resends < 3 && (await apiRequest.allHeaders())['x-tenant'] === undefined; resends++) {
        if ((await enabled.count()) > 0 && !(await enabled.first().isChecked())) await enabled.first().check().catch(() => undefined);
        await page.waitForTimeout(1000);
        [apiRequest, apiResponse] = await send();
      }
      const headers = await apiRequest.allHeaders();
      expect(headers.authorization).toBe(`Bearer ${token}`);
      expect(headers['x-tenant']).toBe(tenant.slug);

      const body = (await apiResponse.json()) as { tenant?: { slug?: string } };
      const problem = contractProblem('GET', '/api/tenant', { status: apiResponse.status(), headers: await apiResponse.allHeaders(), body });
      expect(problem).toBeNull();
      expect(apiResponse.status()).toBe(200);
      expect(body.tenant?.slug).toBe(tenant.slug);

      // The client shows the answer.
      await client.getByText(/200/).first().waitFor();
      await page.screenshot({ path: path.join(OUTPUT_DIR, 'docs-try-it.png') });

      // A send that left without the header was answered 404 (the token's email domain names no
      // tenant), which the browser logs: exactly those, and nothing else, are expected.
      const notFound = errors.filter((e) => /status of 404/.test(e));
      expect(notFound.length).toBe(resends);
      expectStayedLocalAndClean({ requests, blocked, errors: errors.filter((e) => !/status of 404/.test(e)) });
    } finally {
      await page.close();
    }
  },
  TIMEOUT,
);
