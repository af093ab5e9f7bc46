/**
 * The HTML of the provider's sign-in pages (docs/sign-in.md#the-sign-in-page): small,
 * server-rendered, no script, no external asset; one inline style sheet. Every value is
 * escaped; nothing here reads a request.
 */

export const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const STYLE = `
:root{color-scheme:light dark;font-family:system-ui,sans-serif;line-height:1.5}
body{margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center;background:Canvas;color:CanvasText}
main{width:min(26rem,92vw);padding:2rem;border:1px solid GrayText;border-radius:.75rem}
h1{font-size:1.4rem;margin:0 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{box-sizing:border-box;width:100%;font:inherit;padding:.55rem .7rem;border:1px solid GrayText;border-radius:.4rem}
button,.button{display:inline-block;margin-top:1rem;font:inherit;padding:.55rem 1.1rem;border-radius:.4rem;border:1px solid ButtonText;background:ButtonFace;color:ButtonText;cursor:pointer;text-decoration:none}
button:focus-visible,input:focus-visible,a:focus-visible{outline:3px solid Highlight;outline-offset:2px}
.error{border-left:4px solid #b3261e;padding:.25rem .75rem;margin:.75rem 0}
.note{font-size:.9rem}
ul.orgs{list-style:none;padding:0;margin:0}
ul.orgs li{margin:.5rem 0}
ul.orgs button{width:100%;text-align:left;margin:0}
code{font-size:1rem}
`;

function page(title: string, body: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    '<meta name="referrer" content="same-origin">' +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`
  );
}

const alert = (message: string | null | undefined): string => (message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '');

/** The sign-in page: one email field. */
export function emailPage(p: { action: string; email?: string | null; error?: string | null; emailCodes: boolean }): string {
  const note = p.emailCodes
    ? '<p class="note">Your organization’s single sign-on is used when it has one; otherwise we mail you a one-time code.</p>'
    : '<p class="note">Sign-in with a code by email is not available on this service: only organizations with single sign-on can sign in here.</p>';
  return page(
    'Sign in',
    `${alert(p.error)}<form method="post" action="${escapeHtml(p.action)}" novalidate>` +
      '<label for="email">Email address</label>' +
      `<input id="email" name="email" type="email" autocomplete="email" required maxlength="320" value="${escapeHtml(p.email ?? '')}" autofocus>` +
      `<button type="submit">Continue</button></form>${note}`,
  );
}

/** The page that asks for the code mailed to `email`. */
export function codePage(p: { action: string; resendAction: string; email: string; error?: string | null; digits: number; minutes: number }): string {
  return page(
    'Check your email',
    `<p>We sent a ${p.digits}-digit code to <strong>${escapeHtml(p.email)}</strong>. It works for ${p.minutes} minutes.</p>${alert(p.error)}` +
      `<form method="post" action="${escapeHtml(p.action)}" novalidate>` +
      '<label for="code">Code</label>' +
      `<input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]*" maxlength="20" required autofocus>` +
      '<button type="submit">Sign in</button></form>' +
      `<form method="post" action="${escapeHtml(p.resendAction)}"><input type="hidden" name="email" value="${escapeHtml(p.email)}"><button type="submit">Send a new code</button></form>`,
  );
}

export interface OrganizationChoice {
  readonly slug: string;
  readonly name: string;
  /** Only through the organization's SSO: a link that starts it instead of a choice. */
  readonly ssoAction?: string | null;
}

/** The organizations the person may enter, to choose one. */
export function organizationsPage(p: { action: string; organizations: readonly OrganizationChoice[]; note?: string | null }): string {
  const items = p.organizations
    .map((o) => {
      const label = `${escapeHtml(o.name)} <span class="note">(${escapeHtml(o.slug)})</span>`;
      if (o.ssoAction) {
        return `<li><form method="post" action="${escapeHtml(o.ssoAction)}"><button type="submit">${label} — sign in with your organization’s SSO</button></form></li>`;
      }
      return `<li><form method="post" action="${escapeHtml(p.action)}"><input type="hidden" name="organization" value="${escapeHtml(o.slug)}"><button type="submit">${label}</button></form></li>`;
    })
    .join('');
  return page('Choose an organization', `${alert(p.note)}<ul class="orgs">${items}</ul>`);
}

/** A sign-in that cannot go on: what happened, what to do, and a reference for an admin. */
export function errorPage(p: { title: string; message: string; reference: string | null }): string {
  const ref = p.reference ? `<p class="note">Reference: <code>${escapeHtml(p.reference)}</code> — give it to your administrator if you ask them for help.</p>` : '';
  return page(p.title, `<p>${escapeHtml(p.message)}</p>${ref}`);
}
