/**
 * The sign-in link of `tenantctl console`:
 * `<service>/console/<page>#code=<one-time code>&expires=<unix seconds>[&tenant=<slug>]`.
 *
 * The fragment leaves the address bar before anything renders, and the code is exchanged once
 * for the session's token through the generated mutation of `POST /api/console/sessions`. The
 * browser's history may keep the link as it was opened: it holds a spent code, never a token
 * (docs/console.md#the-local-provider-tenantctl-console).
 *
 * The service answers a used, expired and unknown code alike (it never says whether a code
 * existed); the link's own `expires` tells the person which of "expired" and "already used" it is.
 */
import { useMutation } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { createConsoleSessionMutation } from '@generated/@tanstack/react-query.gen';
import { asProblem } from './api';

export interface SignInLink {
  readonly code: string;
  /** Unix seconds when the code expires (from the link; display only), or null. */
  readonly expiresAt: number | null;
  /** The tenant the link opens on. */
  readonly tenant: string | null;
}

const CODE = /^[A-Za-z0-9_-]{43}$/;
const SLUG = /^[a-z0-9-]{1,255}$/;

const INCOMPLETE = 'The sign-in link is not complete: copy the whole link that tenantctl console printed.';
const OLD_LINK = 'This sign-in link comes from an older tenantctl and is no longer accepted. Print a new one with tenantctl console and open it.';
const EXPIRED = 'This sign-in link has expired: a link from tenantctl console must be opened within minutes of being printed (5 unless its --code-ttl says otherwise). Print a new one and open it.';
const USED = 'This sign-in link was already used: a link signs in once. Print a new one with tenantctl console and open it.';

let pending: SignInLink | null = null;

/**
 * Takes a sign-in link's fragment out of the address bar and the history entry. Returns a
 * notice to show when the fragment was a broken or outdated link; the link itself waits for
 * `useSignInLinkExchange`.
 */
export function adoptSignInLink(): { found: boolean; notice: string | null } {
  const hash = window.location.hash.startsWith('#') ? window.location.hash.slice(1) : '';
  if (!hash) return { found: false, notice: null };
  const params = new URLSearchParams(hash);
  const code = params.get('code');
  if (code === null && !params.has('token')) return { found: false, notice: null };
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
  // A token in the link is what this design removed: it is dropped unread.
  if (code === null) return { found: true, notice: OLD_LINK };
  if (!CODE.test(code)) return { found: true, notice: INCOMPLETE };
  const expires = Number(params.get('expires'));
  const tenant = params.get('tenant');
  pending = { code, expiresAt: Number.isInteger(expires) && expires > 0 ? expires : null, tenant: tenant !== null && SLUG.test(tenant) ? tenant : null };
  return { found: true, notice: null };
}

/** The link adopted and not yet exchanged (read, not taken: React may call an initializer twice). */
function pendingLink(): SignInLink | null {
  return pending;
}

/** What the sign-in page says when the service did not accept a link's code. */
export function refusalMessage(error: unknown, link: SignInLink, nowMs = Date.now()): string {
  const problem = asProblem(error);
  if (problem.error === 'Sign-in code not accepted') return link.expiresAt !== null && link.expiresAt * 1000 <= nowMs ? EXPIRED : USED;
  if (problem.error === 'Validation error') return INCOMPLETE;
  return problem.sentence;
}

/**
 * Exchanges the link adopted at start (or pasted into this tab's address bar later) once, and
 * reports the token or why there is none. True while an exchange is under way.
 */
export function useSignInLinkExchange(onSignedIn: (token: string, tenant: string | null) => void, onRefused: (notice: string) => void): boolean {
  const [link, setLink] = useState<SignInLink | null>(pendingLink);
  const started = useRef<string | null>(null);
  const exchange = useMutation(createConsoleSessionMutation());
  const callbacks = useRef({ onSignedIn, onRefused });
  callbacks.current = { onSignedIn, onRefused };

  // A link pasted into a tab that is already open changes only the fragment (no page load).
  useEffect(() => {
    const onHash = () => {
      const { found, notice } = adoptSignInLink();
      if (notice !== null) callbacks.current.onRefused(notice);
      else if (found) setLink(pendingLink());
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  const { mutate } = exchange;
  useEffect(() => {
    // Once per code, even when React runs this effect twice.
    if (!link || started.current === link.code) return;
    started.current = link.code;
    pending = null;
    mutate(
      { body: { code: link.code } },
      {
        onSuccess: (session) => {
          setLink(null);
          callbacks.current.onSignedIn(session.access_token, link.tenant);
        },
        onError: (error) => {
          setLink(null);
          callbacks.current.onRefused(refusalMessage(error, link));
        },
      },
    );
  }, [link, mutate]);

  return link !== null;
}
