/**
 * The provider's own pages (docs/sign-in.md#the-provider): the logout confirmation, the signed-out
 * page and the error page, plain HTML with no script, no external resource and none of the
 * protocol library's default texts or styles. Every value shown is escaped.
 */

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/** Asks the person to confirm signing out; `form` is the library's form (its hidden xsrf field). */
export function logoutPage(form: string): string {
  return page(
    'Sign out',
    `<h1>Sign out?</h1>
<p>You are about to sign out of every application that uses this sign-in.</p>
${form}
<p><button type="submit" form="op.logoutForm" value="yes" name="logout" autofocus>Sign out</button>
<button type="submit" form="op.logoutForm">Stay signed in</button></p>`,
  );
}

export function signedOutPage(): string {
  return page('Signed out', '<h1>You are signed out</h1>\n<p>You may close this window.</p>');
}

/** A protocol error shown to the person (never a redirect to an unverified address). */
export function errorPage(out: { error?: string; error_description?: string }): string {
  const error = out.error ?? 'server_error';
  const description = out.error_description ?? 'The sign-in request could not be completed.';
  return page(
    'Sign-in error',
    `<h1>The sign-in could not continue</h1>
<p id="error-description">${escapeHtml(description)}</p>
<p>Error: <code id="error">${escapeHtml(error)}</code></p>`,
  );
}
