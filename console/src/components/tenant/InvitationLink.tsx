/**
 * The accept link of an invitation just created or resent: the one moment the service returns
 * it (the token is stored hashed). Shown in a read-only field with a Copy button. Without
 * SERVICE_FRONTEND_BASE_URL the service returns no link, and the link is this console's own
 * accept page, which works as well.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { BASE } from '../../router';
import type { InvitationWithToken } from '@generated/types.gen';

export function InvitationLink({ invitation, action }: { invitation: InvitationWithToken; action: 'created' | 'resent' }) {
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  const box = useRef<HTMLDivElement>(null);
  // The submit button was disabled while the request ran, which drops focus: bring it here, so
  // the next Tab reaches the link and a screen reader reads what was sent.
  useEffect(() => {
    box.current?.focus();
    setCopied(null);
  }, [invitation.token]);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  const value = invitation.accept_url ?? `${window.location.origin}${BASE}/invitations/accept?token=${encodeURIComponent(invitation.token)}`;
  async function copy() {
    field.current?.select();
    try {
      await navigator.clipboard.writeText(value);
      setCopied('yes');
    } catch {
      setCopied('no');
    }
  }
  const mail =
    invitation.delivery === 'sent'
      ? `The invitation mail went to ${invitation.email}.`
      : invitation.delivery === 'failed'
        ? `The invitation mail to ${invitation.email} could not be delivered; resend retries it, or give them the link below yourself.`
        : `This service sends no mail (no SERVICE_SMTP_URL): give ${invitation.email} the link below yourself.`;
  return (
    <div className="notice notice-ok" role="status" tabIndex={-1} ref={box}>
      <p>
        Invitation {action} for <strong>{invitation.email}</strong> as {invitation.role}. {mail}
      </p>
      <div className="field invitation-link">
        <label htmlFor={id}>Accept link</label>
        <input id={id} ref={field} readOnly value={value} onFocus={(e) => e.currentTarget.select()} aria-describedby={`${id}-hint`} />
        <span id={`${id}-hint`} className="hint">
          Shown only now: the service keeps a hash of it. Anyone signed in with the invited email address can accept with it
          {invitation.accept_url ? '.' : ' on this console (SERVICE_FRONTEND_BASE_URL is not set, so the invitation mail carries no link).'}
        </span>
      </div>
      <p>
        <button type="button" onClick={() => void copy()}>
          Copy the accept link
        </button>{' '}
        <span aria-live="polite">{copied === 'yes' ? 'Copied.' : copied === 'no' ? 'The browser refused the clipboard: the text is selected, copy it with Ctrl+C.' : ''}</span>
      </p>
    </div>
  );
}
