/**
 * The tenant's directory settings (getScimSettings, updateScimSettings; docs/directory-sync.md):
 * the base URL to paste into the directory, whether sync is on, the ordered group → role
 * mapping (the first mapping whose group holds a member gives its role, else `member`) with the
 * tenant's roles as choices, and the token claim matched against a user's externalId.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { updateScimSettingsMutation } from '@generated/@tanstack/react-query.gen';
import type { ScimSettings } from '@generated/types.gen';
import { CopyField } from '../CopyField';
import { ErrorNotice, SuccessNotice } from '../ErrorNotice';
import { Outcome } from '../tenant/Outcome';
import { invalidateOperations } from '../tenant/queries';
import { RoleSelect } from '../tenant/RoleSelect';
import { useSession } from '../../session';
import { Problems } from '../Problems';

type Mapping = ScimSettings['group_roles'][number];

/** A row being edited: a stable key, so moving a row keeps its inputs (and focus) with it. */
interface Row extends Mapping {
  key: number;
}

let nextKey = 1;
const toRows = (m: Mapping[]): Row[] => m.map((x) => ({ group: x.group, role: x.role, key: nextKey++ }));

export function DirectoryConnection({ settings }: { settings: ScimSettings }) {
  const id = useId();
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Connect your directory</h2>
      <p>
        {settings.enabled ? (
          <>
            <strong>Directory sync is on.</strong> The directory&apos;s users are this tenant&apos;s members: people join, change role and leave through it (and by
            invitation), never from their sign-in&apos;s claims.
          </>
        ) : (
          <>
            <strong>Directory sync is off</strong> until you create a token below.
          </>
        )}
      </p>
      <CopyField
        label="SCIM base URL"
        value={settings.base_url}
        copyLabel="Copy the base URL"
        hint="Tenant URL in Entra ID, SCIM connector base URL in Okta; the token below goes with it."
      />
    </section>
  );
}

export function GroupRolesEditor({ settings }: { settings: ScimSettings }) {
  const s = useSession();
  const queryClient = useQueryClient();
  const id = useId();
  const [rows, setRows] = useState<Row[]>(() => toRows(settings.group_roles));
  const [claim, setClaim] = useState(settings.external_id_claim ?? '');
  const [problems, setProblems] = useState<string[]>([]);
  const [saved, setSaved] = useState(false);
  const [outcomes, setOutcomes] = useState(0);
  const settled = () => setOutcomes((n) => n + 1);
  const save = useMutation({
    ...updateScimSettingsMutation(),
    onMutate: () => setSaved(false),
    onSuccess: async (next) => {
      setRows(toRows(next.group_roles));
      setClaim(next.external_id_claim ?? '');
      setSaved(true);
      settled();
      await invalidateOperations(queryClient, 'getScimSettings', 'listTenantEvents');
    },
    onError: settled,
  });
  const change = (key: number, patch: Partial<Mapping>) => setRows((rs) => rs.map((r) => (r.key === key ? { ...r, ...patch } : r)));
  const move = (i: number, by: -1 | 1) =>
    setRows((rs) => {
      const next = [...rs];
      [next[i], next[i + by]] = [next[i + by]!, next[i]!];
      return next;
    });
  function submit(e: FormEvent) {
    e.preventDefault();
    const found: string[] = [];
    const groups = rows.map((r) => r.group.trim());
    if (groups.some((g) => g === '')) found.push('Every mapping needs a group: type its display name as the directory sends it, or remove the mapping.');
    const seen = new Set<string>();
    const twice = groups.filter((g) => g !== '' && (seen.has(g) || !seen.add(g)));
    if (twice.length) found.push(`${[...new Set(twice)].join(', ')} ${twice.length === 1 ? 'is' : 'are'} mapped more than once: only the first mapping of a group can apply.`);
    setProblems(found);
    setSaved(false);
    if (found.length) return;
    const c = claim.trim();
    save.mutate({ headers: s.tenantHeaders, body: { group_roles: rows.map((r) => ({ group: r.group.trim(), role: r.role })), external_id_claim: c === '' ? null : c } });
  }
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Groups and roles</h2>
      <p className="hint">
        A member&apos;s role is that of the first mapping whose group holds them, from the top; a member in none of these groups is <code>member</code>. Roles set
        by the directory change without the last-admin rule.
      </p>
      <form onSubmit={submit} noValidate>
        <Problems list={problems} />
        {rows.length ? (
          <ol className="mapping-list" aria-label="Group to role mappings, first match wins">
            {rows.map((r, i) => {
              const name = r.group.trim() || `mapping ${i + 1}`;
              return (
                <li key={r.key} className="form-row">
                  <div className="field">
                    <label htmlFor={`${id}-g${r.key}`}>Group {i + 1}</label>
                    <input id={`${id}-g${r.key}`} value={r.group} maxLength={300} autoComplete="off" spellCheck={false} onChange={(e) => change(r.key, { group: e.target.value })} />
                  </div>
                  <RoleSelect id={`${id}-r${r.key}`} label={`Role for group ${i + 1}`} value={r.role} onChange={(role) => change(r.key, { role })} />
                  <div className="row-actions">
                    <button type="button" disabled={i === 0} aria-label={`Move ${name} up`} onClick={() => move(i, -1)}>
                      Up
                    </button>{' '}
                    <button type="button" disabled={i === rows.length - 1} aria-label={`Move ${name} down`} onClick={() => move(i, 1)}>
                      Down
                    </button>{' '}
                    <button type="button" aria-label={`Remove ${name}`} onClick={() => setRows((rs) => rs.filter((x) => x.key !== r.key))}>
                      Remove
                    </button>
                  </div>
                </li>
              );
            })}
          </ol>
        ) : (
          <p>No mapping: every directory member is a member.</p>
        )}
        <p>
          <button type="button" onClick={() => setRows((rs) => [...rs, { group: '', role: 'member', key: nextKey++ }])}>
            Add a mapping
          </button>
        </p>
        <div className="field">
          <label htmlFor={`${id}-claim`}>External ID claim</label>
          <input id={`${id}-claim`} value={claim} maxLength={100} autoComplete="off" spellCheck={false} onChange={(e) => setClaim(e.target.value)} aria-describedby={`${id}-claim-hint`} />
          <span id={`${id}-claim-hint`} className="hint">
            Optional: the sign-in token claim that equals a directory user&apos;s externalId (Entra ID: <code>oid</code>). Without it, people are matched by their
            verified email only.
          </span>
        </div>
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save groups and roles'}
        </button>
      </form>
      <Outcome version={outcomes}>
        <ErrorNotice error={save.error} title="The settings were not saved" />
        <SuccessNotice>{saved ? 'Groups and roles saved.' : null}</SuccessNotice>
      </Outcome>
    </section>
  );
}
