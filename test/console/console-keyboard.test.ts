/**
 * The invitation flow with the keyboard alone (Tab, Shift+Tab, Enter, Space and typing; no
 * click, no fill): the admin reaches Invitations from the navigation, fills and sends the form,
 * reaches the new invitation's link and row; the invitee opens the link and accepts. Every
 * stop is checked for a visible focus indicator, and the stops come in the page's order.
 */
import type { Page } from 'playwright-core';
import { closeOwnerConnection, tenantWithMember, tokenFor, unique } from '../helpers/factories';
import { browserIt, checkPage, openConsole, startConsoleHarness, type ConsoleHarness } from '../helpers/console-browser';

const browserTest = browserIt('console-keyboard.test.ts');
let h: ConsoleHarness;

beforeAll(async () => {
  h = await startConsoleHarness((base) => ({ SERVICE_FRONTEND_BASE_URL: `${base}/console` }));
}, 240_000);

afterAll(async () => {
  await h?.close();
  await closeOwnerConnection();
}, 60_000);

interface Stop {
  /** The focused element's accessible name as a person hears it (label, aria-label or text). */
  name: string;
  tag: string;
  /** :focus-visible matches and an outline is drawn. */
  visible: boolean;
}

/** What has focus now, and whether it shows. */
function focused(page: Page): Promise<Stop> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el || el === document.body) return { name: '(body)', tag: 'body', visible: false };
    const labelled = (el as HTMLInputElement).labels?.[0]?.textContent;
    const name = (el.getAttribute('aria-label') ?? labelled ?? el.textContent ?? '').replace(/\s+/g, ' ').trim();
    const style = getComputedStyle(el);
    const visible = el.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
    return { name, tag: el.tagName.toLowerCase(), visible };
  });
}

/**
 * Presses `key` until the focused element's name is `name`, failing if that takes more than
 * `max` presses; returns every stop passed on the way, each of which must show its focus.
 */
async function pressUntil(page: Page, key: 'Tab' | 'Shift+Tab', name: string | RegExp, max = 40): Promise<Stop[]> {
  const stops: Stop[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press(key);
    const stop = await focused(page);
    stops.push(stop);
    expect(stop).toEqual({ name: stop.name, tag: stop.tag, visible: true });
    if (typeof name === 'string' ? stop.name === name : name.test(stop.name)) return stops;
  }
  throw new Error(`${name} not reached with ${max} presses of ${key}; stops: ${stops.map((s) => s.name).join(' | ')}`);
}

/** The next Tab stop, which must be `name`. */
async function tabTo(page: Page, name: string | RegExp): Promise<Stop> {
  const stops = await pressUntil(page, 'Tab', name, 1);
  return stops[0]!;
}

browserTest(
  'the invitation flow with the keyboard only, the admin inviting and the invitee accepting',
  async () => {
    const { tenant, token } = await tenantWithMember('admin');
    const email = `${unique('keys')}@example.test`;
    const adminTab = await openConsole(h, { token, tenant: tenant.slug, path: '/tenant' });
    const a = adminTab.page;
    await a.getByRole('main').getByRole('heading', { name: tenant.name, level: 2 }).waitFor();
    // The page heading has focus on arrival; the navigation lies before it.
    expect((await focused(a)).tag).toBe('h1');
    const back = await pressUntil(a, 'Shift+Tab', 'Invitations');
    expect(back.map((s) => s.name)).toEqual(['Single sign-on', 'Domains', 'Directory', 'Tenant events', 'Invitations']);
    await a.keyboard.press('Enter');
    await a.getByRole('heading', { name: 'Invitations', level: 1 }).waitFor();
    await a.getByText('No invitations yet.').waitFor();
    expect((await focused(a)).tag).toBe('h1');

    // The form's controls in order: email, role, send.
    await tabTo(a, 'Email address');
    await a.keyboard.type(email);
    await tabTo(a, 'Role');
    await a.keyboard.type('admin');
    await tabTo(a, 'Send invitation');
    await a.keyboard.press('Enter');
    await a.getByRole('status').filter({ hasText: `Invitation created for ${email} as admin.` }).waitFor();
    await a.getByRole('cell', { name: email, exact: true }).waitFor();
    // Focus moved to the outcome (the button was disabled while sending), then on through it.
    expect((await focused(a)).tag).toBe('div');
    await tabTo(a, 'Accept link');
    const link = await a.evaluate(() => (document.activeElement as HTMLInputElement).value);
    expect(link.startsWith(`${h.base}/console/invitations/accept?token=`)).toBe(true);
    await tabTo(a, 'Copy the accept link');
    await tabTo(a, 'Status');
    await tabTo(a, `Resend the invitation for ${email}`);
    await tabTo(a, `Revoke the invitation for ${email}`);
    // Back up to the form the same way.
    const up = await pressUntil(a, 'Shift+Tab', 'Email address');
    expect(up.map((s) => s.name)).toEqual([
      `Resend the invitation for ${email}`,
      'Status',
      'Copy the accept link',
      'Accept link',
      'Send invitation',
      'Role',
      'Email address',
    ]);
    await checkPage(a, 'keyboard-invitations');

    // The invitee opens the link (their own sign-in rides in the fragment) and accepts by keyboard.
    const u = new URL(link);
    const inviteeTab = await openConsole(h, { token: tokenFor({ sub: unique('keys'), email }), path: `${u.pathname.slice('/console'.length)}${u.search}` });
    const b = inviteeTab.page;
    await b.getByRole('heading', { name: 'Accept an invitation', level: 1 }).waitFor();
    expect((await focused(b)).tag).toBe('h1');
    await tabTo(b, 'Accept invitation');
    await checkPage(b, 'keyboard-accept-invitation');
    await b.keyboard.press('Space');
    await b.getByRole('heading', { name: 'Tenant', level: 1 }).waitFor();
    await b.getByRole('main').getByRole('definition').filter({ hasText: /^admin$/ }).waitFor();
    expect(await b.getByRole('banner').getByLabel('Tenant').inputValue()).toBe(tenant.slug);

    expect(adminTab.problems).toEqual([]);
    expect(inviteeTab.problems).toEqual([]);
    await adminTab.close();
    await inviteeTab.close();
  },
  120_000,
);
