/**
 * The tenant pages as a member sees them: Members without any admin control, refusals that say
 * why on the admin pages reached by a direct URL, and leaving the tenant. An invitation link
 * opened signed out keeps its token through sign-in; an expired or revoked one is explained.
 * A platform admin may add a user directly on Members.
 */
import { adminToken, closeOwnerConnection, createTenant, createUser, ownerConnection, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, signInLink, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

const browserTest = browserIt('console-tenant.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness();
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

browserTest(
  'a member sees Members without admin controls, is refused the admin pages by URL, and can leave',
  async () => {
    const tenant = await createTenant();
    const admin = await createUser(tenant.id, { role: 'admin' });
    const member = await createUser(tenant.id, { role: 'member' });
    const tab = await openConsole(h, { token: tokenFor({ sub: member.subject, email: member.email }), tenant: tenant.slug, path: '/tenant/members' });
    const { page } = tab;
    const main = page.getByRole('main');

    await page.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await main.getByRole('cell', { name: admin.email, exact: true }).waitFor();
    await main.getByRole('cell', { name: member.email, exact: true }).waitFor();
    expect(await main.getByRole('button').filter({ hasText: /Make|Remove|Add user/ }).count()).toBe(0);
    expect(await main.getByRole('columnheader', { name: 'Actions' }).count()).toBe(0);
    expect(await main.getByRole('textbox').count()).toBe(0);
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'Invitations' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Tenant events' }).count()).toBe(0);
    await checkPage(page, 'tenant-members-member');

    await page.goto(`${h.base}/console/tenant/invitations`);
    await page.getByRole('heading', { name: 'Invitations', level: 1 }).waitFor();
    await page.getByRole('alert').getByText(`this page needs the permission tenant:invitations:write in "${tenant.name}", and your role there (member) does not hold it`, { exact: false }).waitFor();
    expect(await main.getByRole('button', { name: 'Send invitation' }).count()).toBe(0);
    await checkPage(page, 'refusal-tenant-invitations');

    await page.goto(`${h.base}/console/tenant/events`);
    await page.getByRole('alert').getByText(/this page needs the permission tenant:events:read/).waitFor();

    await page.goto(`${h.base}/console/admin/tenants`);
    await page.getByRole('heading', { name: 'All tenants', level: 1 }).waitFor();
    await page.getByRole('alert').getByText(/this page is for platform admins/).waitFor();
    await checkPage(page, 'refusal-admin-tenants');

    // Leaving works for a member, and the console says so on the home page.
    await page.goto(`${h.base}/console/tenant`);
    await main.getByRole('heading', { name: tenant.name, level: 2 }).waitFor();
    await page.getByRole('button', { name: 'Leave this tenant' }).click();
    const dialog = page.getByRole('dialog', { name: `Leave ${tenant.name}?` });
    await checkPage(page, 'tenant-overview-leave-dialog');
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.getByRole('heading', { name: 'Your tenants', level: 1 }).waitFor();
    await page.getByRole('status').filter({ hasText: `You left the tenant "${tenant.slug}".` }).waitFor();
    await page.getByText('You are not a member of any tenant yet.').waitFor();

    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

/** An invitation made through the API by an admin of a fresh tenant: its token and id. */
async function invite(email: string): Promise<{ token: string; id: string; tenantName: string }> {
  const tenant = await createTenant();
  const admin = await createUser(tenant.id, { role: 'admin' });
  const res = await fetch(`${h.base}/api/tenant/invitations`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${tokenFor({ sub: admin.subject, email: admin.email })}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' },
    body: JSON.stringify({ email }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { token: string; invitation_id: string };
  return { token: body.token, id: body.invitation_id, tenantName: tenant.name };
}

browserTest(
  'an invitation link opened signed out keeps its token through sign-in; expired, revoked and wrong-address links are explained',
  async () => {
    const email = `${unique('late')}@example.test`;
    const expired = await invite(email);
    await ownerConnection()('invitations').where({ id: expired.id }).update({ expires_at: new Date(Date.now() - 3_600_000) });

    const tab = await openConsole(h, { path: `/invitations/accept?token=${encodeURIComponent(expired.token)}` });
    const { page } = tab;
    await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
    expect(new URL(page.url()).searchParams.get('token')).toBe(expired.token);
    // The same link with a sign-in fragment (what a `tenantctl console` link adds), opened as a
    // new page load (a change of the fragment alone would not load the page), opens it.
    const acceptUrl = page.url();
    await page.goto('about:blank');
    await page.goto(await signInLink(h.base, tokenFor({ sub: unique('late'), email }), { path: acceptUrl.slice(`${h.base}/console`.length) }));
    await page.getByRole('heading', { name: 'Accept an invitation', level: 1 }).waitFor();
    expect(new URL(page.url()).hash).toBe('');
    await page.getByRole('button', { name: 'Accept invitation' }).press('Enter');
    const gone = page.getByRole('alert').filter({ hasText: 'Invitation expired' });
    await gone.getByText(/Request ID:/).waitFor();
    await page.getByText(/Ask an admin of the tenant to resend it/).waitFor();
    await checkPage(page, 'accept-invitation-expired');

    // Revoked: not found, with the reasons it can be.
    const revoked = await invite(email);
    await ownerConnection()('invitations').where({ id: revoked.id }).update({ status: 'revoked', revoked_at: new Date() });
    await page.goto(`${h.base}/console/invitations/accept?token=${encodeURIComponent(revoked.token)}`);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByRole('alert').filter({ hasText: 'Invitation not found' }).waitFor();
    await page.getByText(/revoked by an admin/).waitFor();

    // Another person's invitation: refused, naming who is signed in.
    const other = await invite(`${unique('someone-else')}@example.test`);
    await page.goto(`${h.base}/console/invitations/accept?token=${encodeURIComponent(other.token)}`);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByText(`You are signed in as ${email}. Sign out, then sign in with the address the invitation was sent to`, { exact: false }).waitFor();

    // No token at all.
    await page.goto(`${h.base}/console/invitations/accept`);
    await page.getByRole('alert').getByText(/No invitation in this link/).waitFor();
    expect(await page.getByRole('button', { name: 'Accept invitation' }).count()).toBe(0);

    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);

browserTest(
  'a platform admin who is a member may add a user directly on Members',
  async () => {
    const tenant = await createTenant();
    const sub = unique('operator');
    await createUser(tenant.id, { subject: sub, role: 'member' });
    const tab = await openConsole(h, { token: adminToken(sub), tenant: tenant.slug, path: '/tenant/members' });
    const { page } = tab;
    const form = page.getByRole('region', { name: 'Add a user directly (platform admin)' });
    await form.waitFor();
    await checkPage(page, 'tenant-members-platform-admin');
    const added = unique('added');
    await form.getByLabel('Subject (sub)').fill(added);
    await form.getByLabel('Email').fill(`${added}@example.test`);
    await form.getByLabel('Role').selectOption('admin');
    await form.getByRole('button', { name: 'Add user' }).click();
    await form.getByRole('status').filter({ hasText: `Added ${added}@example.test as admin.` }).waitFor();
    await page.getByRole('row').filter({ hasText: added }).getByRole('cell', { name: 'admin', exact: true }).waitFor();
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  120_000,
);
