/**
 * The Directory page (docs/directory-sync.md) in Chromium, as a tenant admin: the base URL to
 * paste, a token minted and shown once with its copy button, listed without its secret and
 * revoked after a confirmation; the ordered group → role mapping with the tenant's roles as
 * choices and the external id claim, saved and read back through the API. Members the directory
 * provisioned are marked on the members page. A member is refused the page. Every page is
 * checked with axe.
 */
import { closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, clipboardText, openAsTenantAdmin, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

const browserTest = browserIt('console-directory.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness();
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

/** The tenant's directory settings as the API answers them. */
async function settingsOf(token: string, slug: string): Promise<{ enabled: boolean; group_roles: Array<{ group: string; role: string }>; external_id_claim: string | null; base_url: string }> {
  const res = await fetch(`${h.base}/api/tenant/scim`, { headers: { Authorization: `Bearer ${token}`, 'X-Tenant': slug } });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

/** A directory's first request with `secret`. */
function scim(secret: string): Promise<Response> {
  return fetch(`${h.base}/scim/v2/ServiceProviderConfig`, { headers: { Authorization: `Bearer ${secret}` } });
}

browserTest(
  'a tenant admin mints a token shown once, copies it and the base URL, maps groups to roles in order, and revokes the token',
  async () => {
    const { tenant, token, tab } = await openAsTenantAdmin(h, '/tenant', { clipboard: true });
    const { page } = tab;
    const main = page.getByRole('main');
    // A role of the tenant's own, offered beside the built-in ones.
    const ownRole = unique('auditor');
    const made = await fetch(`${h.base}/api/tenant/roles`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' },
      body: JSON.stringify({ key: ownRole, name: 'Auditor', permissions: [] }),
    });
    expect(made.status).toBe(201);

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Directory' }).click();
    await page.getByRole('heading', { name: 'Directory', level: 1 }).waitFor();
    await main.getByText('Directory sync is off', { exact: true }).waitFor();
    await main.getByText('No token yet: directory sync is off.').waitFor();
    const baseUrl = await page.getByLabel('SCIM base URL').inputValue();
    expect(baseUrl).toBe((await settingsOf(token, tenant.slug)).base_url);
    expect(baseUrl).toMatch(/\/scim\/v2$/);
    await page.getByRole('button', { name: 'Copy the base URL' }).click();
    await main.getByText('Copied.').waitFor();
    expect(await clipboardText(page)).toBe(baseUrl);
    await checkPage(page, 'directory-empty');

    // Minting: the secret once, with its warning and copy button.
    await page.getByLabel('Description').fill('Okta production');
    await page.getByRole('button', { name: 'Create a token' }).click();
    const once = page.getByRole('status').filter({ hasText: 'Copy it now: you will not see it again.' });
    await once.waitFor();
    const secret = await once.getByLabel('SCIM token').inputValue();
    expect(secret).toMatch(/^scim_[A-Za-z0-9_-]{43,}$/);
    await once.getByRole('button', { name: 'Copy the token' }).click();
    await once.getByText('Copied.').waitFor();
    expect(await clipboardText(page)).toBe(secret);
    const row = page.getByRole('row').filter({ hasText: 'Okta production' });
    await row.getByRole('cell', { name: 'never', exact: true }).waitFor();
    await main.getByText('Directory sync is on.', { exact: true }).waitFor();
    await checkPage(page, 'directory-token-once');
    await once.getByRole('button', { name: 'I have stored the token' }).click();
    await once.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(secret);
    // The directory uses it: the list says when, after a reload.
    expect((await scim(secret)).status).toBe(200);

    // The mapping: two groups, the second moved first, the tenant's own role chosen.
    await main.getByText('No mapping: every directory member is a member.').waitFor();
    await page.getByRole('button', { name: 'Add a mapping' }).click();
    await page.getByLabel('Group 1', { exact: true }).fill('Engineering');
    await page.getByLabel('Role for group 1').selectOption('admin');
    await page.getByRole('button', { name: 'Add a mapping' }).click();
    await page.getByLabel('Group 2', { exact: true }).fill('Auditors');
    const second = page.getByLabel('Role for group 2');
    await second.getByRole('option', { name: new RegExp(`^${ownRole} — `) }).waitFor({ state: 'attached' });
    await second.selectOption(ownRole);
    await page.getByRole('button', { name: 'Move Auditors up' }).click();
    expect(await page.getByLabel('Group 1', { exact: true }).inputValue()).toBe('Auditors');
    expect(await page.getByLabel('Role for group 1').inputValue()).toBe(ownRole);
    await page.getByLabel('External ID claim').fill('oid');
    await page.getByRole('button', { name: 'Save groups and roles' }).click();
    await page.getByRole('status').filter({ hasText: 'Groups and roles saved.' }).waitFor();
    expect(await settingsOf(token, tenant.slug)).toMatchObject({
      enabled: true,
      group_roles: [
        { group: 'Auditors', role: ownRole },
        { group: 'Engineering', role: 'admin' },
      ],
      external_id_claim: 'oid',
    });
    await checkPage(page, 'directory-mapping');

    // A mapping without a group is explained here and sends nothing.
    await page.getByRole('button', { name: 'Add a mapping' }).click();
    await page.getByRole('button', { name: 'Save groups and roles' }).click();
    await page.getByRole('alert').getByText(/Every mapping needs a group/).waitFor();
    await page.getByRole('button', { name: 'Remove mapping 3' }).click();
    expect((await settingsOf(token, tenant.slug)).group_roles).toHaveLength(2);

    // Read back after a reload: the order holds, the secret is nowhere.
    await page.reload();
    await page.getByRole('heading', { name: 'Directory', level: 1 }).waitFor();
    await row.waitFor();
    expect(await page.getByLabel('Group 1', { exact: true }).inputValue()).toBe('Auditors');
    expect(await page.getByLabel('Group 2', { exact: true }).inputValue()).toBe('Engineering');
    expect(await page.getByLabel('External ID claim').inputValue()).toBe('oid');
    expect(await page.content()).not.toContain(secret);
    expect(await row.getByRole('cell').nth(2).locator('time').count()).toBe(1);

    // Revoking the last token turns sync off, after a confirmation that says so.
    await row.getByRole('button', { name: 'Revoke Okta production' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke Okta production?' });
    await dialog.getByText(/It is the last token: directory sync turns off/).waitFor();
    await checkPage(page, 'directory-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').filter({ hasText: 'Okta production is revoked' }).waitFor();
    await main.getByText('No token yet: directory sync is off.').waitFor();
    await main.getByText('Directory sync is off', { exact: true }).waitFor();
    expect((await settingsOf(token, tenant.slug)).enabled).toBe(false);
    const refused = await scim(secret);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { schemas: string[] }).schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);

    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  180_000,
);

browserTest(
  'a member has no Directory page: no link, and a refusal that says why by URL',
  async () => {
    const { tenant, tab: adminTab } = await openAsTenantAdmin(h, '/tenant');
    await adminTab.close();
    const member = await createUser(tenant.id, { role: 'member' });
    const tab = await openConsole(h, { token: tokenFor({ sub: member.subject, email: member.email }), tenant: tenant.slug, path: '/tenant/directory' });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Directory', level: 1 }).waitFor();
    await page.getByRole('alert').getByText(`this page needs the permission tenant:directory:manage in "${tenant.name}", and your role there (member) does not hold it`, { exact: false }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Directory' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Create a token' }).count()).toBe(0);
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

browserTest(
  'the members page marks the members that came from the directory, and only those, without role controls; the Directory page lists every directory user',
  async () => {
    const { tenant, admin, tab } = await openAsTenantAdmin(h, '/tenant');
    const fromDirectory = await createUser(tenant.id, { role: 'member' });
    const deactivated = await createUser(tenant.id, { role: 'member' });
    // Directory users bound to those memberships, as a first sign-in leaves them (one since
    // deactivated), and one whose person has not signed in yet.
    const waiting = `${unique('waiting')}@example.com`;
    const directoryUser = (email: string, userId: string | null, active = true) => ({
      tenant_id: tenant.id,
      user_name: email,
      user_name_key: email.toLowerCase(),
      emails: JSON.stringify([{ value: email, type: 'work', primary: true }]),
      email_keys: [email.toLowerCase()],
      user_id: userId,
      active,
    });
    await ownerConnection()('directory_users').insert(directoryUser(fromDirectory.email, fromDirectory.id));
    await ownerConnection()('directory_users').insert(directoryUser(deactivated.email, deactivated.id, false));
    await ownerConnection()('directory_users').insert(directoryUser(waiting, null, false));
    const { page } = tab;
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' }).click();
    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    const marked = page.getByRole('row').filter({ hasText: fromDirectory.email });
    await marked.getByText('Directory', { exact: true }).waitFor();
    await marked.getByText('Role from the directory').waitFor();
    expect(await marked.getByRole('combobox').count()).toBe(0);
    expect(await marked.getByText('Deactivated', { exact: true }).count()).toBe(0);
    await page.getByRole('row').filter({ hasText: deactivated.email }).getByText('Deactivated', { exact: true }).waitFor();
    const adminRow = page.getByRole('row').filter({ hasText: admin.email });
    expect(await adminRow.getByText('Directory', { exact: true }).count()).toBe(0);
    expect(await adminRow.getByRole('combobox').count()).toBe(1);
    await page.getByText(/Members marked Directory come from the tenant's directory/).waitFor();
    await checkPage(page, 'directory-members');

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Directory' }).click();
    await page.getByRole('heading', { name: 'Directory users', level: 2 }).waitFor();
    const rows = page.getByRole('table', { name: 'Directory users' }).getByRole('row');
    await rows.filter({ hasText: waiting }).waitFor();
    const cells = async (email: string) => (await rows.filter({ hasText: email }).getByRole('cell').allInnerTexts()).map((c) => c.trim());
    expect(await cells(fromDirectory.email)).toEqual([fromDirectory.email, '—', 'Active', 'Yes', 'member', '—']);
    expect(await cells(deactivated.email)).toEqual([deactivated.email, '—', 'Deactivated', 'Yes', 'member', '—']);
    expect(await cells(waiting)).toEqual([waiting, '—', 'Deactivated', 'Not yet', 'member', '—']);
    await checkPage(page, 'directory-users');
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
