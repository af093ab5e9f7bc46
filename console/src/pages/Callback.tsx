/**
 * /console/callback: the OpenID provider sends the browser back here with the code; oidc-client-ts
 * checks the state, exchanges the code (with the PKCE verifier) for the tokens, and the access
 * token becomes the console's bearer token. No API operation is called here.
 */
import { useEffect, useState } from 'react';
import { localProblem } from '../api';
import { ErrorNotice } from '../components/ErrorNotice';
import { Loading, Page } from '../components/Page';
import { completeOidcSignIn } from '../oidc';
import { Link, navigate } from '../router';
import { storeToken } from '../session';

let started: Promise<{ accessToken: string; returnTo: string } | null> | null = null;

export default function Callback() {
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    // Once per page load: the code may be exchanged only once (StrictMode runs effects twice).
    started ??= completeOidcSignIn();
    started
      .then((done) => {
        if (!done) return; // a switch of organization went on to the provider's sign-in page
        const { accessToken, returnTo } = done;
        storeToken(accessToken);
        window.dispatchEvent(new Event('tenant-service:token'));
        navigate(returnTo, { replace: true });
      })
      .catch((e: unknown) => {
        // The provider's refusal (access_denied, …) or oidc-client-ts's own check (an unknown
        // or already used state: a reload of this page, a link from another tab).
        const why = e instanceof Error && e.message ? ` (${e.message.replace(/\.$/, '')})` : '';
        setFailure(`The sign-in could not be completed${why}. Start again from the sign-in page.`);
      });
  }, []);
  if (!failure) return <Loading what="your sign-in" />;
  return (
    <Page title="Sign-in failed">
      <ErrorNotice error={localProblem('Sign-in failed', failure)} />
      <p>
        <Link to="/signin">Back to sign-in</Link>
      </p>
    </Page>
  );
}
