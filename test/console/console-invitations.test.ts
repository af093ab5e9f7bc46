/**
 * Invitations in the console, end to end on a real SMTP server: a tenant admin invites someone,
 * the mail arrives, the invitee opens its link in their own browser (signed in with their own
 * token), accepts, and lands in the tenant; the admin sees them in Members, changes their role,
 * and is told why they can neither demote themselves nor leave as the last admin. Resend and
 * revoke, and the shared invitation rate limit shown as a sentence with its wait.
 */
import { closeOwnerConnection, tenantWithMember, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';

const browserTest = browserIt('console-invitations.test.ts');
let h: ConsoleHarness;
let sink: SmtpSink;

beforeAll(async () => {
  sink = await startSmtpSink();
  h = await startConsoleHarness((base) => ({
    SERVICE_SMTP_URL: sink.url,
    SERVICE_MAIL_FROM: 'console-test@example.test',
    SERVICE_FRONTEND_BASE_URL: `${base}/console`,
    SERVICE_RATE_LIMIT_ENABLED: 'true',
  }));
}, 240_000);

afterAll(async () => {
  await h?.close();
  await sink?.close();
  await closeOwnerConnection();
}, 60_000);

/** The console path (below /console) of an absolute console URL, query included. */
function consolePath(url: string): string {
  const u = new URL(url);
  expect(u.origin).toBe(h.base);
  expect(u.pathname.startsWith('/console/')).toBe(true);
  return `${u.pathname.slice('/console'.length)}${u.search}`;
}

browserTest(
  'an admin invites by mail, the invitee accepts from the link, the admin changes their role and is told the last-admin rule',
  async () => {
    const { tenant, user: admin, token: adminTok } = await tenantWithMember('admin');
    const inviteeEmail = `${unique('invitee')}@example.test`;

    const adminTab = await openConsole(h, { token: adminTok, tenant: tenant.slug, path: '/tenant/invitations' });
    const a = adminTab.page;
    await a.getByRole('heading', { name: 'Invitations', level: 1 }).waitFor();
    await a.getByText('No invitations yet.').waitFor();
    await a.getByLabel('Email address').fill(inviteeEmail);
    await a.getByLabel('Role').selectOption('member');
    await a.getByRole('button', { name: 'Send invitation' }).click();
    const created = a.getByRole('status').filter({ hasText: `Invitation created for ${inviteeEmail}` });
    await created.waitFor();
    await created.getByText(`The invitation mail went to ${inviteeEmail}.`).waitFor();
    const shownLink = await a.getByLabel('Accept link').inputValue();
    expect(shownLink.startsWith(`${h.base}/console/invitations/accept?token=`)).toBe(true);
    await a.getByRole('cell', { name: inviteeEmail, exact: true }).waitFor();
    const row = a.getByRole('row').filter({ hasText: inviteeEmail });
    await row.getByRole('cell', { name: 'pending', exact: true }).waitFor();
    await row.getByRole('cell', { name: 'Mailed', exact: true }).waitFor();
    await checkPage(a, 'tenant-invitations');

    // The mail the service really sent carries the same link.
    const mail = await sink.waitFor(inviteeEmail);
    const mailed = /Accept the invitation: (\S+)/.exec(mail.part('text/plain') ?? '')?.[1];
    expect(mailed).toBe(shownLink);

    // The invitee, in their own browser, signs in with a link and opens the mailed one.
    const inviteeTok = tokenFor({ sub: unique('invitee'), email: inviteeEmail });
    const inviteeTab = await openConsole(h, { token: inviteeTok, path: consolePath(mailed!) });
    const b = inviteeTab.page;
    await b.getByRole('heading', { name: 'Accept an invitation', level: 1 }).waitFor();
    await b.getByRole('main').getByRole('definition').filter({ hasText: inviteeEmail }).waitFor();
    await checkPage(b, 'accept-invitation');
    await b.getByRole('button', { name: 'Accept invitation' }).click();
    await b.getByRole('heading', { name: 'Tenant', level: 1 }).waitFor();
    expect(new URL(b.url()).pathname).toBe('/console/tenant');
    await b.getByRole('main').getByRole('heading', { name: tenant.name, level: 2 }).waitFor();
    await b.getByRole('definition').filter({ hasText: /^member$/ }).waitFor();
    await checkPage(b, 'tenant-overview-member');

    // The same link a second time: used, so not found, and said so.
    await b.goto(mailed!);
    await b.getByRole('button', { name: 'Accept invitation' }).click();
    const refused = b.getByRole('alert').filter({ hasText: 'Invitation not found' });
    await refused.waitFor();
    await refused.getByText(/Request ID:/).waitFor();
    await b.getByText(/The link may have been used already/).waitFor();

    // The admin sees the new member and changes their role, twice.
    await a.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Members' }).click();
    await a.getByRole('heading', { name: 'Members', level: 1 }).waitFor();
    await a.getByRole('cell', { name: inviteeEmail, exact: true }).waitFor();
    await checkPage(a, 'tenant-members-admin');
    await a.getByRole('button', { name: `Make admin: ${inviteeEmail}` }).click();
    await a.getByRole('status').filter({ hasText: `${inviteeEmail} is now an admin.` }).waitFor();
    await a.getByRole('row').filter({ hasText: inviteeEmail }).getByRole('cell', { name: 'admin', exact: true }).waitFor();
    await a.getByRole('button', { name: `Make member: ${inviteeEmail}` }).click();
    await a.getByRole('status').filter({ hasText: `${inviteeEmail} is now a member.` }).waitFor();

    // Demoting themselves as the only admin: refused, with the rule and what to do.
    await a.getByRole('button', { name: `Make member: ${admin.email}` }).click();
    const dialog = a.getByRole('dialog', { name: 'Give up your admin role?' });
    await dialog.waitFor();
    await checkPage(a, 'tenant-members-demote-self-dialog');
    await dialog.getByRole('button', { name: 'Make me a member' }).click();
    const demoteRefused = a.getByRole('alert').filter({ hasText: 'Could not change the role' });
    await demoteRefused.waitFor();
    await demoteRefused.getByText(/The last admin of a tenant cannot be demoted/).waitFor();
    await demoteRefused.getByText(/Request ID:/).waitFor();
    await a.getByRole('note').getByText(/a tenant must keep at least one admin/).waitFor();
    await a.getByRole('row').filter({ hasText: admin.email }).getByRole('cell', { name: 'admin', exact: true }).waitFor();
    await checkPage(a, 'tenant-members-last-admin');

    // Leaving as the last admin: refused the same way on the tenant page.
    await a.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tenant', exact: true }).click();
    await a.getByRole('heading', { name: 'Tenant', level: 1 }).waitFor();
    await checkPage(a, 'tenant-overview-admin');
    await a.getByRole('button', { name: 'Leave this tenant' }).click();
    await a.getByRole('dialog', { name: `Leave ${tenant.name}?` }).getByRole('button', { name: 'Leave' }).click();
    await a.getByRole('alert').filter({ hasText: 'Could not leave this tenant' }).getByText(/You are the last admin of tenant/).waitFor();
    await a.getByRole('note').getByText(/you are its last admin/).waitFor();

    // The tenant's event log holds what happened, and its filter narrows it.
    await a.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tenant events' }).click();
    await a.getByRole('heading', { name: 'Tenant events', level: 1 }).waitFor();
    await a.getByRole('cell', { name: 'invitation.accepted', exact: true }).waitFor();
    await a.getByRole('cell', { name: 'member.role_changed', exact: true }).first().waitFor();
    await checkPage(a, 'tenant-events');
    await a.getByLabel('Action').fill('invitation.created');
    await a.getByRole('button', { name: 'Apply filters' }).click();
    await a.getByRole('cell', { name: 'member.role_changed', exact: true }).first().waitFor({ state: 'detached' });
    await a.getByRole('cell', { name: 'invitation.created', exact: true }).waitFor();
    expect(await a.getByRole('cell', { name: 'invitation.created', exact: true }).count()).toBe(1);
    await a.getByLabel('Actor subject').fill('nobody-did-this');
    await a.getByRole('button', { name: 'Apply filters' }).click();
    await a.getByText('No events match these filters.').waitFor();

    // The invitee, now a member, ends on their own Members page without admin controls.
    await b.goto(`${h.base}/console/tenant/members`);
    await b.getByRole('cell', { name: admin.email, exact: true }).waitFor();
    expect(await b.getByRole('button', { name: /^Make |^Remove / }).count()).toBe(0);

    expect(adminTab.problems).toEqual([]);
    expect(inviteeTab.problems).toEqual([]);
    await adminTab.close();
    await inviteeTab.close();
  },
  180_000,
);

browserTest(
  'resend gives a new link and mail, revoke asks first, and the invitation rate limit is a sentence with its wait',
  async () => {
    const { tenant, token } = await tenantWithMember('admin');
    const email = `${unique('later')}@example.test`;
    const tab = await openConsole(h, { token, tenant: tenant.slug, path: '/tenant/invitations' });
    const { page } = tab;
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const first = await page.getByLabel('Accept link').inputValue();
    const firstMail = await sink.waitFor(email);

    await page.getByRole('button', { name: `Resend the invitation for ${email}` }).click();
    await page.getByRole('status').filter({ hasText: `Invitation resent for ${email}` }).waitFor();
    const second = await page.getByLabel('Accept link').inputValue();
    expect(second).not.toBe(first);
    // The service answers after the mail server has taken the mail, so it is already here.
    const mails = sink.messages.filter((m) => m.to.includes(email.toLowerCase()));
    expect(mails).toHaveLength(2);
    expect(mails[0]).toBe(firstMail);
    const secondMail = mails[1]!.part('text/plain') ?? '';
    expect(secondMail).toContain(second);

    await page.getByRole('button', { name: `Revoke the invitation for ${email}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this invitation?' });
    await dialog.getByText(email).waitFor();
    await checkPage(page, 'tenant-invitations-revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').filter({ hasText: `The invitation for ${email} is revoked` }).waitFor();
    await page.getByRole('row').filter({ hasText: email }).getByRole('cell', { name: 'revoked', exact: true }).waitFor();
    await page.getByLabel('Status').selectOption('pending');
    await page.getByText('No pending invitations.').waitFor();
    await page.getByLabel('Status').selectOption('revoked');
    await page.getByRole('cell', { name: email, exact: true }).waitFor();

    // The counter of invitations and resends (50 an hour per caller) is spent through the API...
    for (let i = 2; i < 50; i++) {
      const res = await fetch(`${h.base}/api/tenant/invitations`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'X-Tenant': tenant.slug, 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: `${unique('bulk')}@example.test` }),
      });
      expect(res.status).toBe(201);
    }
    // ...so the console's next one is refused, and says how long to wait.
    await page.getByLabel('Email address').fill(`${unique('one-too-many')}@example.test`);
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const limited = page.getByRole('alert').filter({ hasText: 'Could not send the invitation' });
    await limited.getByText(/Too many requests of this kind\. Try again in \d+ (seconds|minutes)\./).waitFor();
    await page.getByText(/share one limit per admin \(50 an hour\)/).waitFor();
    await checkPage(page, 'tenant-invitations-rate-limited');

    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  180_000,
);
