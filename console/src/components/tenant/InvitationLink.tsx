/**
 * The accept link of an invitation just created or resent: the one moment the service returns
 * it (the token is stored hashed). Shown in a read-only field with a Copy button. Without
 * SERVICE_FRONTEND_BASE_URL the service returns no link, and the link is this console's own
 * accept page, which works as well.
 */
import { useEffect, useRef } from 'react';
import { BASE } from '../../router';
import type { InvitationWithToken } from '@generated/types.gen';
import { CopyField } from '../CopyField';

export function InvitationLink({ invitation, action }: { invitation: InvitationWithToken; action: 'created' | 'resent' }) {
  const box = useRef<HTMLDivElement>(null);
  // The submit button was disabled while the request ran, which drops focus: bring it here, so
  // the next Tab reaches the link and a screen reader reads what was sent.
  useEffect(() => {
    box.current?.focus();
  }, [invitation.token]);
  const value = invitation.accept_url ?? `${window.location.origin}${BASE}/invitations/accept?token=${encodeURIComponent(invitation.token)}`;
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
      <CopyField
        label="Accept link"
        value={value}
        copyLabel="Copy the accept link"
        hint={
          <>
            Shown only now: the service keeps a hash of it. Anyone signed in with the invited email address can accept with it
            {invitation.accept_url ? '.' : ' on this console (SERVICE_FRONTEND_BASE_URL is not set, so the invitation mail carries no link).'}
          </>
        }
      />
    </div>
  );
}
