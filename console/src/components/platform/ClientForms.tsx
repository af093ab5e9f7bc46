/**
 * The forms of the applications that sign people in (docs/sign-in.md#clients): register one
 * (name, type, redirect URIs one per line), show a confidential client's secret once with a copy
 * button, edit a client's name and redirect URIs, rotate its secret and delete it after a
 * confirmation. The service checks every rule and its sentence is shown as it says it.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { createOidcClientMutation, deleteOidcClientMutation, updateOidcClientMutation } from '@generated/@tanstack/react-query.gen';
import type { CreatedOidcClient, OidcClient, OidcClientType } from '@generated/types.gen';
import { ConfirmDialog } from '../ConfirmDialog';
import { CopyField } from '../CopyField';
import { ErrorNotice } from '../ErrorNotice';
import { Problems } from '../Problems';

const CLIENT_READS = new Set(['listOidcClients', 'getOidcClient', 'listEvents']);

export function invalidateClientReads(queryClient: ReturnType<typeof useQueryClient>): Promise<void> {
  return queryClient.invalidateQueries({
    predicate: (q) => {
      const key = q.queryKey[0] as { _id?: string } | undefined;
      return typeof key?._id === 'string' && CLIENT_READS.has(key._id);
    },
  });
}

/** One URI a line, blank lines ignored. */
export function uriLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** The mistakes the page can name before asking the service (which checks every rule). */
function uriProblems(label: string, uris: string[], required: boolean): string[] {
  if (required && !uris.length) return [`Enter at least one ${label}.`];
  const bad = uris.filter((u) => {
    try {
      new URL(u);
      return false;
    } catch {
      return true;
    }
  });
  return bad.length ? [`${bad.join(', ')}: not an absolute URL (${label}s start with https:// or a scheme such as com.example.app:).`] : [];
}

/** A client's secret, once: copy it now. */
export function SecretOnce({ client, headline, onDismiss }: { client: CreatedOidcClient; headline: string; onDismiss: () => void }) {
  if (!client.client_secret) return null;
  return (
    <div className="notice notice-ok" role="status">
      <p>
        <strong>{headline}</strong> <strong>Copy the client secret now: it will not be shown again.</strong> The application authenticates with it; keep it in
        its secret store, never in a browser or a mobile app.
      </p>
      <CopyField label="Client ID" value={client.client_id} copyLabel="Copy the client ID" />
      <CopyField label="Client secret" value={client.client_secret} copyLabel="Copy the client secret" />
      <p>
        <button type="button" onClick={onDismiss}>
          I have stored the secret
        </button>
      </p>
    </div>
  );
}

function UriField({ id, label, value, onChange, hint }: { id: string; label: string; value: string; onChange: (v: string) => void; hint: string }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} value={value} spellCheck={false} onChange={(e) => onChange(e.target.value)} aria-describedby={`${id}-hint`} />
      <span className="hint" id={`${id}-hint`}>
        {hint}
      </span>
    </div>
  );
}

const REDIRECT_HINT = 'One a line, matched exactly: https://, http:// only on 127.0.0.1, [::1] or localhost, or (public clients) an app scheme such as com.example.app:/callback.';

interface ClientFieldValues {
  readonly name: string;
  readonly redirectUris: string[];
  readonly logoutUris: string[];
}

/** A client's name and URIs as typed, and what the page finds wrong with them before sending. */
function useClientFields(initial: { name: string; redirects: string[]; logouts: string[] }, nameMissing: string) {
  const [name, setName] = useState(initial.name);
  const [redirects, setRedirects] = useState(initial.redirects.join('\n'));
  const [logouts, setLogouts] = useState(initial.logouts.join('\n'));
  const [problems, setProblems] = useState<string[]>([]);
  return {
    name,
    setName,
    redirects,
    setRedirects,
    logouts,
    setLogouts,
    problems,
    /** The values to send, or null once the problems found are shown. */
    check(): ClientFieldValues | null {
      const redirectUris = uriLines(redirects);
      const logoutUris = uriLines(logouts);
      const found = [...(name.trim() ? [] : [nameMissing]), ...uriProblems('redirect URI', redirectUris, true), ...uriProblems('post-logout redirect URI', logoutUris, false)];
      setProblems(found);
      return found.length ? null : { name: name.trim(), redirectUris, logoutUris };
    },
    clear(): void {
      setName('');
      setRedirects('');
      setLogouts('');
    },
  };
}

/** The name field, what `between` adds after it, and the two URI fields. */
function ClientFields({ id, fields, logoutHint, between }: { id: string; fields: ReturnType<typeof useClientFields>; logoutHint: string; between?: ReactNode }) {
  return (
    <>
      <Problems list={fields.problems} />
      <div className="field">
        <label htmlFor={`${id}-name`}>Name</label>
        <input id={`${id}-name`} value={fields.name} maxLength={200} onChange={(e) => fields.setName(e.target.value)} />
      </div>
      {between}
      <UriField id={`${id}-redirects`} label="Redirect URIs" value={fields.redirects} onChange={fields.setRedirects} hint={REDIRECT_HINT} />
      <UriField id={`${id}-logouts`} label="Post-logout redirect URIs" value={fields.logouts} onChange={fields.setLogouts} hint={logoutHint} />
    </>
  );
}

export function RegisterClientForm({ onRegistered }: { onRegistered: (c: CreatedOidcClient) => void }) {
  const id = useId();
  const queryClient = useQueryClient();
  const fields = useClientFields({ name: '', redirects: [], logouts: [] }, 'Enter a name: what admins and people see.');
  const [type, setType] = useState<OidcClientType>('confidential');
  const m = useMutation({
    ...createOidcClientMutation(),
    onSuccess: async (c) => {
      onRegistered(c);
      fields.clear();
      await invalidateClientReads(queryClient);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    const v = fields.check();
    if (!v) return;
    m.mutate({ body: { name: v.name, type, redirect_uris: v.redirectUris, ...(v.logoutUris.length ? { post_logout_redirect_uris: v.logoutUris } : {}) } });
  }
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Register an application</h2>
      <form onSubmit={submit} noValidate>
        <ClientFields
          id={id}
          fields={fields}
          logoutHint="Optional, one a line: where people may be sent after signing out."
          between={
            <div className="field">
              <label htmlFor={`${id}-type`}>Type</label>
              <select id={`${id}-type`} value={type} onChange={(e) => setType(e.target.value as OidcClientType)} aria-describedby={`${id}-type-hint`}>
                <option value="confidential">Confidential: a server that keeps a secret</option>
                <option value="public">Public: a browser or native app (PKCE only)</option>
              </select>
              <span className="hint" id={`${id}-type-hint`}>
                A confidential client gets a secret, shown once.
              </span>
            </div>
          }
        />
        <button type="submit" className="primary" disabled={m.isPending}>
          {m.isPending ? 'Registering…' : 'Register the application'}
        </button>
        <ErrorNotice error={m.error} title="The application was not registered" />
      </form>
    </section>
  );
}

export function EditClientForm({ client, onSaved }: { client: OidcClient; onSaved: (message: string) => void }) {
  const id = useId();
  const queryClient = useQueryClient();
  const fields = useClientFields({ name: client.name, redirects: client.redirect_uris, logouts: client.post_logout_redirect_uris }, 'Enter a name.');
  const m = useMutation({
    ...updateOidcClientMutation(),
    onSuccess: async (c) => {
      onSaved(`${c.name} saved.`);
      await invalidateClientReads(queryClient);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    const v = fields.check();
    if (!v) return;
    m.mutate({ path: { client_id: client.client_id }, body: { name: v.name, redirect_uris: v.redirectUris, post_logout_redirect_uris: v.logoutUris } });
  }
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Edit</h2>
      <form onSubmit={submit} noValidate>
        <ClientFields id={id} fields={fields} logoutHint="One a line; leave empty for none." />
        <button type="submit" className="primary" disabled={m.isPending}>
          {m.isPending ? 'Saving…' : 'Save changes'}
        </button>
        <ErrorNotice error={m.error} title="The changes were not saved" />
      </form>
    </section>
  );
}

/** A new secret for a confidential client, after a confirmation: the old one stops working at once. */
export function RotateSecret({ client, onRotated }: { client: OidcClient; onRotated: (c: CreatedOidcClient) => void }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const m = useMutation({
    ...updateOidcClientMutation(),
    onSuccess: async (c) => {
      setOpen(false);
      onRotated(c);
      await invalidateClientReads(queryClient);
    },
  });
  return (
    <>
      <button type="button" onClick={() => setOpen(true)}>
        Rotate the secret
      </button>
      <ConfirmDialog
        open={open}
        title="Rotate the client secret?"
        confirmLabel="Rotate the secret"
        busy={m.isPending}
        onConfirm={() => m.mutate({ path: { client_id: client.client_id }, body: { rotate_secret: true } })}
        onCancel={() => {
          setOpen(false);
          m.reset();
        }}
      >
        <p>
          A new secret replaces the old one <strong>at once</strong>: {client.name} cannot sign people in until its configuration holds the new one.
        </p>
        <ErrorNotice error={m.error} title="The secret was not rotated" />
      </ConfirmDialog>
    </>
  );
}

export function DeleteClient({ client, onDeleted }: { client: OidcClient; onDeleted: (message: string) => void }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const m = useMutation({
    ...deleteOidcClientMutation(),
    onSuccess: async () => {
      setOpen(false);
      queryClient.removeQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes(client.client_id) });
      onDeleted(`Application ${client.name} deleted: it can no longer sign anyone in.`);
      await invalidateClientReads(queryClient);
    },
  });
  return (
    <>
      <button type="button" className="danger" aria-label={`Delete ${client.name}`} onClick={() => setOpen(true)}>
        Delete
      </button>
      <ConfirmDialog
        open={open}
        title="Delete this application?"
        confirmLabel="Delete the application"
        busy={m.isPending}
        onConfirm={() => m.mutate({ path: { client_id: client.client_id } })}
        onCancel={() => {
          setOpen(false);
          m.reset();
        }}
      >
        <p>
          <strong>{client.name}</strong> can no longer sign anyone in: its codes and refresh tokens stop working at once, and the access tokens it holds expire
          shortly. This cannot be undone.
        </p>
        <ErrorNotice error={m.error} title="The application was not deleted" />
      </ConfirmDialog>
    </>
  );
}
