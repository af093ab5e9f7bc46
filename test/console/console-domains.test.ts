/**
 * The Domains page (docs/domains.md) in Chromium, as a tenant admin, with a real DNS server: a
 * domain claimed, its TXT record copied with the copy buttons, Verify refused naming what DNS
 * answered, verified once the record is published, the join policy saved and read back through
 * the API, the domain removed. Checked with axe.
 */
import { adminToken, closeOwnerConnection, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, clipboardText, openAsTenantAdmin, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';
import { startDnsServer, type DnsServer } from '../helpers/dns-server';

const browserTest = browserIt('console-domains.test.ts');
let h: ConsoleHarness;
let dns: DnsServer;

beforeAll(async () => {
  dns = await startDnsServer();
  h = await startConsoleHarness({ SERVICE_DNS_SERVERS: dns.address });
}, 240_000);

afterAll(async () => {
  await h?.close();
  await dns?.close();
  await closeOwnerConnection();
}, 60_000);

browserTest(
  'a tenant admin claims a domain, copies the record, is told what DNS answered, verifies it and sets who joins by it',
  async () => {
    const { tenant, token, tab } = await openAsTenantAdmin(h, '/tenant', { clipboard: true });
    const { page } = tab;
    const main = page.getByRole('main');
    const api = (path: string) => fetch(`${h.base}${path}`, { headers: { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug } });
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Domains' }).click();
    await page.getByRole('heading', { name: 'Domains', level: 1 }).waitFor();
    await main.getByText('No domains yet.').waitFor();
    const domain = `${unique('console')}.example`;
    await page.getByLabel('Domain', { exact: true }).fill(domain.toUpperCase());
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('heading', { name: domain, level: 2 }).waitFor();
    await main.getByText('Pending: publish the record, then verify').waitFor();

    const { domains } = (await (await api('/api/tenant/domains')).json()) as { domains: Array<{ verification: { name: string; value: string } }> };
    const record = domains[0]!.verification;
    expect(await page.getByLabel(`Record name for ${domain}`).inputValue()).toBe(record.name);
    await page.getByRole('button', { name: `Copy the record value for ${domain}` }).click();
    await main.getByText('Copied.').first().waitFor();
    expect(await clipboardText(page)).toBe(record.value);
    await checkPage(page, 'domains-pending');

    await page.getByRole('button', { name: `Verify ${domain}` }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'Not verified' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('NXDOMAIN');

    dns.set(record.name, { txt: [record.value] });
    await page.getByRole('button', { name: `Verify ${domain}` }).click();
    await main.getByText(`${domain} is verified.`).waitFor();
    await main.getByText('Verified', { exact: true }).waitFor();

    await page.getByLabel(`People with a verified email at ${domain}`).selectOption('automatic');
    await page.getByRole('button', { name: 'Save joining' }).click();
    await main.getByText(`Joining by ${domain} saved.`).waitFor();
    const after = (await (await api(`/api/tenant/domains/${domain}`)).json()) as { status: string; join: string; join_role: string };
    expect(after).toMatchObject({ status: 'verified', join: 'automatic', join_role: 'member' });
    await checkPage(page, 'domains-verified');

    await page.getByRole('button', { name: `Remove ${domain}` }).click();
    await main.getByText('No domains yet.').waitFor();
    expect((await api(`/api/tenant/domains/${domain}`)).status).toBe(404);
  },
  240_000,
);

browserTest(
  'a person whose verified email is at a domain a tenant opened for joining sees it on the home page and joins it',
  async () => {
    const { tenant, token: adminAuth } = await openAsTenantAdmin(h, '/tenant');
    const domain = `${unique('joinme')}.example`;
    const made = await fetch(`${h.base}/api/setup/tenant/${tenant.id}/domains`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminToken()}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ domain, verified: true }),
    });
    expect(made.status).toBe(201);
    const set = await fetch(`${h.base}/api/tenant/domains/${domain}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${adminAuth}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' },
      body: JSON.stringify({ join: 'suggest' }),
    });
    expect(set.status).toBe(200);
    const person = tokenFor({ sub: unique('quinn'), email: `quinn@${domain}`, claims: { email_verified: true } });
    const { page } = await openConsole(h, { token: person, path: '/' });
    const joinable = page.getByRole('table', { name: 'Tenants you can join' });
    await joinable.getByRole('cell', { name: domain }).waitFor();
    await checkPage(page, 'domains-joinable');
    await joinable.getByRole('button', { name: `Join ${tenant.name}` }).click();
    await page.getByText(`You joined ${tenant.slug} as member.`).waitFor();
    await page.getByRole('table', { name: 'Tenants you belong to' }).getByRole('cell', { name: tenant.slug, exact: true }).waitFor();
    await joinable.waitFor({ state: 'detached' });
  },
  240_000,
);
