/**
 * The Single sign-on page (docs/sso.md) in Chromium, as a tenant admin: a SAML connection added
 * from metadata, its ACS URL copied with its copy button, an OIDC connection added against a
 * provider that answers discovery, SSO required (and refused to be left without an active
 * connection), a connection deactivated and deleted, read back through the API. A member without
 * tenant:sso:manage does not see the page. Checked with axe.
 */
import { closeOwnerConnection, createUser, tokenFor } from '../helpers/factories';
import { browserIt, checkPage, clipboardText, openAsTenantAdmin, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';
import { startCraftedIdp, type CraftedIdp } from '../api/sso/helpers/crafted-idp';
import { idpMetadataXml, makeKeyAndCert } from '../api/sso/helpers/certs';

const browserTest = browserIt('console-sso.test.ts');
let h: ConsoleHarness;
let idp: CraftedIdp;

beforeAll(async () => {
  idp = await startCraftedIdp('console-client');
  h = await startConsoleHarness((base) => ({ SERVICE_PUBLIC_URL: base, SERVICE_SSO_ALLOW_PRIVATE_NETWORKS: 'true' }));
}, 240_000);

afterAll(async () => {
  await h?.close();
  await idp?.close();
  await closeOwnerConnection();
}, 60_000);

browserTest(
  'a tenant admin adds SAML and OIDC connections, copies the ACS URL, requires SSO, deactivates and deletes',
  async () => {
    const { tenant, token, tab } = await openAsTenantAdmin(h, '/tenant', { clipboard: true });
    const { page } = tab;
    const main = page.getByRole('main');
    const api = (path: string) => fetch(`${h.base}${path}`, { headers: { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug } });
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Single sign-on' }).click();
    await page.getByRole('heading', { name: 'Single sign-on', level: 1 }).waitFor();
    await main.getByText('No connections yet.').waitFor();

    // Requiring SSO without a connection is refused, naming why.
    await page.getByLabel('Require single sign-on (members may not sign in by email code)').click();
    await page.getByRole('alert').filter({ hasText: 'lock every member out' }).waitFor();

    const cert = makeKeyAndCert();
    await page.getByLabel('Protocol').selectOption('saml');
    await page.getByLabel('Connection name').fill('ADFS');
    await page.getByLabel('Identity provider metadata (XML)').fill(idpMetadataXml({ entityId: 'http://adfs.acme.test/adfs/services/trust', ssoUrl: 'https://adfs.acme.test/adfs/ls/', certBase64: cert.certBase64 }));
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('heading', { name: 'ADFS', level: 2 }).waitFor();
    const { connections } = (await (await api('/api/tenant/sso/connections')).json()) as { connections: Array<{ connection_id: string; acs_url: string }> };
    expect(await page.getByLabel('SP entity ID for ADFS').inputValue()).toBe(`${h.base}/sso/saml/${connections[0]!.connection_id}`);
    await page.getByRole('button', { name: 'Copy the ACS URL for ADFS' }).click();
    await main.getByText('Copied.').first().waitFor();
    expect(await clipboardText(page)).toBe(connections[0]!.acs_url);
    await checkPage(page, 'sso-saml');

    await page.getByLabel('Protocol').selectOption('oidc');
    await page.getByLabel('Connection name').fill('Okta');
    await page.getByLabel('Issuer URL').fill(idp.issuer);
    await page.getByLabel('Client ID').fill('console-client');
    await page.getByLabel('Client secret').fill('console-secret');
    await page.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('heading', { name: 'Okta', level: 2 }).waitFor();
    expect(await page.getByLabel('Redirect URI for Okta').inputValue()).toBe(`${h.base}/sso/oidc/callback`);
    await main.getByText('console-secret').waitFor({ state: 'detached' });

    await page.getByLabel('Require single sign-on (members may not sign in by email code)').click();
    await main.getByText('Members now sign in only through single sign-on.').waitFor();
    expect(((await (await api('/api/tenant/sso')).json()) as { sso_required: boolean }).sso_required).toBe(true);
    await checkPage(page, 'sso-required');

    await page.getByRole('button', { name: 'Deactivate Okta' }).click();
    await page.getByRole('button', { name: 'Activate Okta' }).waitFor();
    await page.getByRole('button', { name: 'Delete Okta' }).click();
    await page.getByRole('heading', { name: 'Okta', level: 2 }).waitFor({ state: 'detached' });
    const left = (await (await api('/api/tenant/sso/connections')).json()) as { connections: unknown[] };
    expect(left.connections).toHaveLength(1);
  },
  240_000,
);

browserTest(
  'a member without tenant:sso:manage has no Single sign-on link',
  async () => {
    const { tenant } = await openAsTenantAdmin(h, '/tenant');
    const m = await createUser(tenant.id, { role: 'member' });
    const { page } = await openConsole(h, { token: tokenFor({ sub: m.subject, email: m.email }), tenant: tenant.slug, path: '/tenant/members' });
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' }).count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Single sign-on' }).count()).toBe(0);
  },
  240_000,
);
