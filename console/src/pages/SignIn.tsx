/**
 * Sign-in: with the OpenID provider configured for the console (SERVICE_OIDC_ISSUER and
 * SERVICE_CONSOLE_CLIENT_ID), else the service's own provider; with the `local` provider, also a
 * link printed by `tenantctl console`.
 */
import { useEffect, useState } from 'react';
import { localProblem } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Page } from '../components/Page';
import { consoleConfig } from '../config';
import { oidcAvailable, ownProvider, startOidcSignIn } from '../oidc';
import { useLocation } from '../router';
import { peekNotice, takeNotice } from '../session';

export default function SignIn() {
  const loc = useLocation();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  // Why the person is here (an expired sign-in, a broken or expired link), shown once: read
  // when the page appears, forgotten once shown.
  const [notice] = useState(peekNotice);
  useEffect(() => {
    if (notice !== null) takeNotice();
  }, [notice]);
  const returnTo = loc.path === '/signin' ? '/' : `${loc.path}${loc.query.size ? `?${loc.query.toString()}` : ''}`;
  return (
    <Page title="Sign in">
      {notice ? (
        <div className="notice" role="status">
          <p>{notice}</p>
        </div>
      ) : null}
      {oidcAvailable() ? (
        <section aria-labelledby="signin-oidc">
          <h2 id="signin-oidc">{ownProvider() ? 'With your email address' : "With your organization's sign-in"}</h2>
          <p>
            {ownProvider()
              ? "This service's sign-in page asks for your email address, then for a code it mails you or for your organization's single sign-on, and the organization to work on; then it brings you back here."
              : `You will be sent to ${new URL(consoleConfig.oidc!.issuer).host} to sign in, then brought back here.`}
          </p>
          <button
            type="button"
            className="primary"
            disabled={busy}
            onClick={() => {
              setBusy(true);
              setFailure(null);
              startOidcSignIn(returnTo).catch(() => {
                setBusy(false);
                setFailure(`The sign-in provider at ${consoleConfig.oidc!.issuer} could not be reached. Try again, or ask whoever runs this service.`);
              });
            }}
          >
            {busy ? 'Redirecting…' : 'Sign in'}
          </button>
          {failure ? <ErrorNotice error={localProblem('Sign-in failed', failure)} /> : null}
        </section>
      ) : null}
      {consoleConfig.authProvider === 'local' ? (
        <section aria-labelledby="signin-local">
          <h2 id="signin-local">With a sign-in link from tenantctl</h2>
          <p>This instance signs its own tokens (the local provider). On the machine that runs it, print a sign-in link and open it:</p>
          <pre>
            <code>npx tenantctl console --admin</code>
          </pre>
          <p>
            To sign in as a regular user, name them instead: <code>--sub you@example.com</code>; add <code>--tenant SLUG</code> to open one tenant. Open
            the link within 5 minutes: it works once, and signs you in for 15 minutes in the tab you open it in. Closing that tab or signing out forgets
            the sign-in.
          </p>
        </section>
      ) : null}
      {!oidcAvailable() && consoleConfig.authProvider !== 'local' ? (
        <p>
          This instance checks tokens from an identity provider but has no console sign-in configured. Its operator sets SERVICE_OIDC_ISSUER and
          SERVICE_CONSOLE_CLIENT_ID to enable it.
        </p>
      ) : null}
    </Page>
  );
}
