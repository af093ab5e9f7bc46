/**
 * The tenant's SCIM tokens (docs/directory-sync.md): minting one (createScimToken) with the
 * secret shown once in a copy field, the list with when each was last used (listScimTokens), and
 * revoking one after a confirmation (revokeScimToken): the directory using it is refused at once.
 */
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { createScimTokenMutation, listScimTokensOptions, revokeScimTokenMutation } from '@generated/@tanstack/react-query.gen';
import type { ScimToken, ScimTokenCreated } from '@generated/types.gen';
import { ConfirmDialog } from '../ConfirmDialog';
import { CopyField } from '../CopyField';
import { ErrorNotice, SuccessNotice } from '../ErrorNotice';
import { Loading } from '../Page';
import { Time } from '../Time';
import { Outcome } from '../tenant/Outcome';
import { invalidateOperations } from '../tenant/queries';
import { useSession } from '../../session';

/** What a token is called in a sentence: its description, else the start of its id. */
export function tokenName(t: Pick<ScimToken, 'token_id' | 'description'>): string {
  return t.description?.trim() || `token ${t.token_id.slice(0, 8)}`;
}

/** Reads that change when a token is minted or revoked. */
const TOKEN_READS = ['listScimTokens', 'getScimSettings', 'listTenantEvents'] as const;

function TokenOnce({ created, onDismiss }: { created: ScimTokenCreated; onDismiss: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  // The Create button was disabled while the request ran, which drops focus: bring it here, so
  // a screen reader reads the warning and the next Tab reaches the token.
  useEffect(() => box.current?.focus(), [created.token_id]);
  return (
    <div className="notice notice-ok" role="status" tabIndex={-1} ref={box}>
      <p>
        <strong>Token {tokenName(created)} created.</strong> <strong>Copy it now: you will not see it again.</strong> The service keeps only a hash of it; if it
        is lost, create another and revoke this one.
      </p>
      <CopyField
        label="SCIM token"
        value={created.token}
        copyLabel="Copy the token"
        hint="Paste it with the base URL into your directory: Secret Token in Entra ID, API Token in Okta."
      />
      <p>
        <button type="button" onClick={onDismiss}>
          I have stored the token
        </button>
      </p>
    </div>
  );
}

export function ScimTokens() {
  const s = useSession();
  const queryClient = useQueryClient();
  const id = useId();
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<ScimTokenCreated | null>(null);
  const [revoking, setRevoking] = useState<ScimToken | null>(null);
  const [revoked, setRevoked] = useState<string | null>(null);
  const [outcomes, setOutcomes] = useState(0);
  const settled = () => setOutcomes((n) => n + 1);
  const list = useQuery(listScimTokensOptions({ headers: s.tenantHeaders }));
  const refresh = () => invalidateOperations(queryClient, ...TOKEN_READS);
  const create = useMutation({
    ...createScimTokenMutation(),
    onMutate: () => {
      setRevoked(null);
      revoke.reset();
    },
    onSuccess: async (t) => {
      setCreated(t);
      setDescription('');
      await refresh();
    },
    onError: settled,
  });
  const revoke = useMutation({
    ...revokeScimTokenMutation(),
    onMutate: () => {
      setCreated(null);
      create.reset();
    },
    onSuccess: async (_data, vars) => {
      const t = list.data?.tokens.find((x) => x.token_id === vars.path.token_id);
      setRevoking(null);
      setRevoked(`${t ? tokenName(t) : 'The token'} is revoked: a directory using it is refused from now on.`);
      await refresh();
      settled();
    },
    onError: () => {
      setRevoking(null);
      settled();
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    setCreated(null);
    const d = description.trim();
    create.mutate({ headers: s.tenantHeaders, body: d ? { description: d } : {} });
  }
  const tokens = list.data?.tokens ?? [];
  const last = tokens.length === 1;
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Tokens</h2>
      <p className="hint">Each token lets one directory provision this tenant's members and groups. Directory sync is on while a token exists.</p>
      <form onSubmit={submit}>
        <div className="form-row">
          <div className="field">
            <label htmlFor={`${id}-desc`}>Description</label>
            <input id={`${id}-desc`} value={description} maxLength={200} autoComplete="off" onChange={(e) => setDescription(e.target.value)} aria-describedby={`${id}-desc-hint`} />
            <span id={`${id}-desc-hint`} className="hint">
              Optional: which directory uses it, such as “Entra ID production”.
            </span>
          </div>
          <button type="submit" className="primary" disabled={create.isPending}>
            {create.isPending ? 'Creating…' : 'Create a token'}
          </button>
        </div>
      </form>
      {created ? (
        <TokenOnce
          created={created}
          onDismiss={() => {
            // Dropped from the mutation's state too: the page keeps no copy of the secret.
            setCreated(null);
            create.reset();
          }}
        />
      ) : null}
      {/* Before the outcome: closing the dialog returns focus to its opener, then the outcome takes it. */}
      <ConfirmDialog
        open={revoking !== null}
        title={`Revoke ${revoking ? tokenName(revoking) : 'this token'}?`}
        confirmLabel="Revoke"
        busy={revoke.isPending}
        onCancel={() => setRevoking(null)}
        onConfirm={() => revoking && revoke.mutate({ headers: s.tenantHeaders, path: { token_id: revoking.token_id } })}
      >
        <p>The directory using this token is refused at once, and its changes stop reaching this tenant until it is given a new token.</p>
        {last ? <p>It is the last token: directory sync turns off, and members are no longer provisioned by the directory.</p> : null}
      </ConfirmDialog>
      <Outcome version={outcomes}>
        <ErrorNotice error={create.error} title="Could not create the token" />
        <ErrorNotice error={revoke.error} title="Could not revoke the token" />
        <SuccessNotice>{revoked}</SuccessNotice>
      </Outcome>
      {list.isPending ? <Loading what="tokens" /> : null}
      <ErrorNotice error={list.error} />
      {list.data ? (
        tokens.length ? (
          <table>
            <caption className="visually-hidden">SCIM tokens of {s.currentTenant?.name ?? 'the tenant'}</caption>
            <thead>
              <tr>
                <th scope="col">Description</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => (
                <tr key={t.token_id}>
                  <td>{t.description ?? <span className="hint">No description ({t.token_id.slice(0, 8)})</span>}</td>
                  <td>
                    <Time value={t.created_at} />
                  </td>
                  <td>
                    <Time value={t.last_used_at} />
                  </td>
                  <td className="row-actions">
                    <button type="button" disabled={revoke.isPending} aria-label={`Revoke ${tokenName(t)}`} onClick={() => setRevoking(t)}>
                      Revoke
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <p>No token yet: directory sync is off.</p>
        )
      ) : null}
    </section>
  );
}
