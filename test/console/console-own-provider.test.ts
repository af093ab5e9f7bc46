/**
 * The console signs in through the service's own provider (docs/console.md#signing-in-through-the-services-own-provider),
 * in Chromium, with no external provider configured: the console's built-in client, the sign-in
 * pages (email, a code mailed to a real SMTP server, the organization), the person lands in
 * their tenant with the pages their role allows, switches tenant (a token for the other one,
 * asked with prompt=none and `organization`), and signs out at the provider (RP-initiated logout),
 * after which the provider asks for the email again; a switch the provider cannot answer without
 * its pages (prompt=none refused) goes on through them, with prompt=login.
 */
import { closeOwnerConnection, createTenant, createUser, ownerConnection, unique } from '../helpers/factories';
import { browserIt, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';
import { createFreshDatabase, type FreshDatabase } from '../helpers/fresh-database';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { waitFor } from '../helpers/wait';

const browserTest = browserIt('console-own-provider.test.ts');
let h: ConsoleHarness;
let smtp: SmtpSink;
let fresh: FreshDatabase;

beforeAll(async () => {
  // A database of its own: every instance's boot points the console's built-in client at its own
  // URL, and the other suites' instances would move it away from this one's.
  fresh = await createFreshDatabase('tenant_service_console_own');
  process.env.TEST_DATABASE_URL = fresh.url;
  smtp = await startSmtpSink();
  h = await startConsoleHarness((base) => ({ SERVICE_PUBLIC_URL: base, SERVICE_SMTP_URL: smtp.url, SERVICE_MAIL_FROM: 'Sign-in <sign-in@service.test>' }));
}, 240_000);

afterAll(async () => {
  await h?.close();
  await smtp?.close();
  await closeOwnerConnection();
  await fresh?.drop();
}, 60_000);

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A person whose account signs in by email code, admin of one tenant and member of another. */
async function person() {
  const email = `${unique('olga')}@example.test`;
  const [account] = (await ownerConnection()('sign_in_accounts').insert({ email, email_verified: true }).returning(['id'])) as Array<{ id: string }>;
  await ownerConnection()('sign_in_identities').insert({ account_id: account!.id, kind: 'email', issuer: 'email', subject: email });
  const issuer = `${h.base}/oidc`;
  const first = await createTenant({ name: 'First Org' });
  const second = await createTenant({ name: 'Second Org' });
  await createUser(first.id, { subject: account!.id, issuer, email, role: 'admin' });
  await createUser(second.id, { subject: account!.id, issuer, email, role: 'member' });
  return { email, accountId: account!.id, issuer, first, second };
}

/** The newest 8-digit code mailed to `to` after the `after` first ones. */
async function mailedCode(to: string, after: number): Promise<string> {
  const mail = await waitFor(`a code mailed to ${to}`, () => smtp.messages.filter((m) => m.to.includes(to)).slice(after).at(-1));
  const m = /\b(\d{8})\b/.exec(mail.part('text/plain') ?? mail.raw);
  if (!m) throw new Error('no code in the mail');
  return m[1]!;
}

/** The provider's email page, then its code page with the code mailed after the `mailed` first ones. */
async function enterEmailAndCode(page: import('playwright-core').Page, email: string, mailed: number): Promise<void> {
  // The provider's page, not the console's own sign-in screen (whose section's name also holds "email address").
  await page.waitForURL((u) => u.pathname.startsWith('/oidc/interaction/'));
  await page.getByLabel('Email address', { exact: true }).fill(email);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByLabel('Code').fill(await mailedCode(email, mailed));
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A new person at the console's sign-in, sent on to the provider: the authorization request it made. */
async function signInStarted() {
  const p = await person();
  const tab = await openConsole(h);
  const { page } = tab;
  await page.getByRole('heading', { name: 'With your email address', level: 2 }).waitFor();
  const authorize = page.waitForRequest((r) => r.url().startsWith(`${p.issuer}/auth?`));
  await page.getByRole('button', { name: 'Sign in' }).click();
  return { p, tab, page, url: new URL((await authorize).url()) };
}

browserTest(
  'email, code by mail, organization; the tenant pages of the role; switch tenant; sign out at the provider',
  async () => {
    const { p, tab, page, url } = await signInStarted();
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: 'tenant-service-console',
      redirect_uri: `${h.base}/console/callback`,
      scope: 'openid email profile offline_access',
      resource: `${h.base}/api`,
      code_challenge_method: 'S256',
    });

    // The provider's sign-in pages: the email, the code it mailed, the organization.
    await enterEmailAndCode(page, p.email, 0);
    await page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
    await page.getByRole('button', { name: new RegExp(`\\(${p.first.slug}\\)`) }).click();

    // Back in the console, signed in to the first tenant, as its admin.
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    const token = await page.evaluate(() => sessionStorage.getItem('tenant-service.console.token'));
    expect(claimsOf(token!)).toMatchObject({ iss: p.issuer, sub: p.accountId, aud: `${h.base}/api`, client_id: 'tenant-service-console', tenant: p.first.slug, tenant_role: 'admin' });
    const nav = page.getByRole('navigation', { name: 'Console' });
    await page.goto(`${h.base}/console/tenant`);
    await nav.getByRole('link', { name: 'Invitations', exact: true }).waitFor();
    expect(await nav.getByRole('link', { name: 'Roles', exact: true }).count()).toBe(1);

    // Switch to the second tenant: a token for it from the provider, without its pages.
    const pagesSeen: string[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${p.issuer}/interaction/`)) pagesSeen.push(r.url());
    });
    await page.getByRole('banner').getByLabel('Tenant').selectOption(p.second.slug);
    await waitFor('a token for the second tenant', async () => {
      const t = await page.evaluate(() => sessionStorage.getItem('tenant-service.console.token'));
      return t !== null && claimsOf(t).tenant === p.second.slug ? t : undefined;
    });
    expect(pagesSeen).toEqual([]);
    await page.goto(`${h.base}/console/tenant`);
    await nav.getByRole('link', { name: 'Members', exact: true }).waitFor();
    // A member there: none of the admin's pages.
    for (const name of ['Invitations', 'Roles']) expect(await nav.getByRole('link', { name, exact: true }).count()).toBe(0);

    // Sign out: the provider's confirmation, then back to the console, signed out everywhere.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'With your email address', level: 2 }).waitFor();
    expect(page.url()).toBe(`${h.base}/console/`);
    expect(await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('tenant-service.console.token')))).toEqual([]);
    // The provider's session is over: signing in again asks for the email.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname.startsWith('/oidc/interaction/'));
    await page.getByLabel('Email address', { exact: true }).waitFor();
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  180_000,
);

browserTest(
  'a switch the provider cannot answer without a page (its session ended) goes on through the sign-in page, into the tenant asked for',
  async () => {
    const { p, tab, page } = await signInStarted();
    await enterEmailAndCode(page, p.email, 0);
    await page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
    await page.getByRole('button', { name: new RegExp(`\\(${p.first.slug}\\)`) }).click();
    await page.getByRole('navigation', { name: 'Console' }).waitFor();

    // The provider forgets the person's session (expired, or ended elsewhere): prompt=none is
    // answered login_required, and the console asks again with prompt=login.
    const ended = await ownerConnection()('oidc_payloads').where({ model: 'Session' }).whereRaw("payload->>'accountId' = ?", [p.accountId]).delete();
    expect(ended).toBeGreaterThan(0);
    const authorizations: URL[] = [];
    page.on('request', (r) => {
      if (r.url().startsWith(`${p.issuer}/auth?`)) authorizations.push(new URL(r.url()));
    });
    await page.getByRole('banner').getByLabel('Tenant').selectOption(p.second.slug);
    await page.waitForURL((u) => u.pathname.startsWith('/oidc/interaction/'));
    await page.getByLabel('Email address', { exact: true }).waitFor();
    expect(authorizations.map((u) => [u.searchParams.get('prompt'), u.searchParams.get('organization')])).toEqual([
      ['none', p.second.slug],
      ['login', p.second.slug],
    ]);
    // Signed in again: straight into the tenant asked for, no organization page in between.
    await enterEmailAndCode(page, p.email, 1);
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    const token = await waitFor('a token for the second tenant', async () => {
      const t = await page.evaluate(() => sessionStorage.getItem('tenant-service.console.token'));
      return t !== null && claimsOf(t).tenant === p.second.slug ? t : undefined;
    });
    expect(claimsOf(token)).toMatchObject({ sub: p.accountId, tenant: p.second.slug, tenant_role: 'member' });
    expect(tab.problems).toEqual([]);
    await tab.close();
  },
  180_000,
);
