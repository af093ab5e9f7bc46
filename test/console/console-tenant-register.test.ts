/**
 * Registering an organization in the console (docs/tenants.md#self-service-registration): the rules
 * shown first, an active tenant that becomes the current one, a slug conflict as a sentence with
 * its request ID, and, on an instance that requires approval, the explanation that the tenant waits
 * for a platform admin.
 */
import { closeOwnerConnection, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

const browserTest = browserIt('console-tenant-register.test.ts');
let open: ConsoleHarness;
let approval: ConsoleHarness;

beforeAll(async () => {
  open = await startConsoleHarness();
  approval = await startConsoleHarness({ SERVICE_TENANT_REGISTRATION_REQUIRES_APPROVAL: 'true' });
}, 240_000);

afterAll(async () => {
  await open?.close();
  await approval?.close();
  await closeOwnerConnection();
}, 60_000);

function person(): { token: string; email: string } {
  const sub = unique('founder');
  const email = `${sub}@example.test`;
  return { token: tokenFor({ sub, email }), email };
}

browserTest(
  'registration opens an active tenant as the current one, and a taken slug is refused in a sentence',
  async () => {
    const { token, email } = person();
    const slug = unique('org');
    const tab = await openConsole(open, { token, path: '/register' });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Register an organization', level: 1 }).waitFor();
    await page.getByText('Registration is open.').waitFor();
    await page.getByText('A new organization can be used at once.').waitFor();
    expect(await page.getByLabel('Admin email').inputValue()).toBe(email);
    await checkPage(page, 'register');

    await page.getByLabel('Organization name').fill(`Org ${slug}`);
    await page.getByLabel('Slug (optional)').fill(slug);
    await page.getByLabel('Organization size (optional)').selectOption('small');
    await page.getByLabel('What you will use it for (optional)').fill('Trying the console');
    await page.getByRole('button', { name: 'Register' }).click();
    const done = page.getByRole('status').filter({ hasText: 'is registered, you are its admin, and it is now your current tenant' });
    await done.waitFor();
    await done.getByText(`X-Tenant: ${slug}`, { exact: true }).waitFor();
    // The mutation reports success only after its onSuccess (my tenants reloaded, tenant selected).
    expect(await page.getByRole('banner').getByLabel('Tenant').inputValue()).toBe(slug);
    await checkPage(page, 'register-done');
    await done.getByRole('link', { name: `Open Org ${slug}` }).click();
    await page.getByRole('heading', { name: 'Tenant', level: 1 }).waitFor();
    await page.getByRole('main').getByRole('definition').filter({ hasText: /^admin$/ }).waitFor();

    // The same slug again: the service's Conflict, as a sentence with its request ID and advice.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Register an organization' }).click();
    await page.getByLabel('Organization name').fill('Another organization');
    await page.getByLabel('Slug (optional)').fill(slug);
    await page.getByRole('button', { name: 'Register' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'Registration refused' });
    await refused.waitFor();
    await refused.getByText(slug).waitFor();
    await refused.getByText(/Request ID:/).waitFor();
    await page.getByText('Choose another slug, or leave the slug empty').waitFor();
    expect(await refused.textContent()).not.toMatch(/[{}]/);
    await checkPage(page, 'register-conflict');

    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

browserTest(
  'where approval is required, the rules say so and the result explains the tenant waits for a platform admin',
  async () => {
    const { token } = person();
    const tab = await openConsole(approval, { token, path: '/register' });
    const { page } = tab;
    await page.getByText('A new organization waits for a platform admin to approve it before it can be used.').waitFor();
    await page.getByLabel('Organization name').fill(`Pending ${unique('org')}`);
    await page.getByRole('button', { name: 'Register' }).click();
    const done = page.getByRole('status').filter({ hasText: 'waiting for approval' });
    await done.getByText(/A platform admin of this service must approve it before anyone can use it/).waitFor();
    await checkPage(page, 'register-pending');

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Your tenants' }).click();
    await page.getByRole('cell', { name: 'Waiting for approval', exact: true }).waitFor();

    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
