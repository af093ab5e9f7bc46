/**
 * The accept link of an invitation just created or resent: the one moment the service returns
 * it (the token is stored hashed). Shown in a read-only field with a Copy button; without
 * SERVICE_FRONTEND_BASE_URL there is no link, only the token to hand over.
 */
import { useEffect, useId, useRef, useState } from 'react';
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
  const value = invitation.accept_url ?? invitation.token;
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
        <label htmlFor={id}>{invitation.accept_url ? 'Accept link' : 'Invitation token'}</label>
        <input id={id} ref={field} readOnly value={value} onFocus={(e) => e.currentTarget.select()} aria-describedby={`${id}-hint`} />
        <span id={`${id}-hint`} className="hint">
          {invitation.accept_url
            ? 'Shown only now: the service keeps a hash of it. Anyone signed in with the invited email address can accept with it.'
            : 'Shown only now. No accept link is configured (SERVICE_FRONTEND_BASE_URL), so the invitee accepts by sending this token to POST /api/invitations/accept.'}
        </span>
      </div>
      <p>
        <button type="button" onClick={() => void copy()}>
          {invitation.accept_url ? 'Copy the accept link' : 'Copy the token'}
        </button>{' '}
        <span aria-live="polite">{copied === 'yes' ? 'Copied.' : copied === 'no' ? 'The browser refused the clipboard: the text is selected, copy it with Ctrl+C.' : ''}</span>
      </p>
    </div>
  );
}
