/**
 * Creating a webhook endpoint (URL, event patterns, description, enabled), then showing its
 * signing secret once, with a copy button: the service never shows it again.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import { createWebhookMutation } from '@generated/@tanstack/react-query.gen';
import type { CreatedWebhook } from '@generated/types.gen';
import { ErrorNotice } from '../ErrorNotice';
import { Link } from '../../router';
import { invalidateWebhookReads } from './WebhookActions';
import { Problems } from '../Problems';

const PATTERN = /^(\*|[a-z_]+\.\*|[a-z_]+\.[a-z_]+)$/;

function SecretOnce({ created, onDismiss }: { created: CreatedWebhook; onDismiss: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  return (
    <div className="notice notice-ok" role="status">
      <p>
        <strong>Webhook created.</strong> Its signing secret is below. <strong>Copy it now: it will not be shown again.</strong> The receiver needs it to check the
        signature of every delivery.
      </p>
      <p>Signing secret:</p>
      <p className="secret">
        <code>{created.secret}</code>
      </p>
      <p>
        <button
          type="button"
          onClick={() =>
            navigator.clipboard.writeText(created.secret).then(
              () => setCopied('Copied to the clipboard.'),
              () => setCopied('The browser did not allow copying: select the secret and copy it yourself.'),
            )
          }
        >
          Copy the secret
        </button>{' '}
        <span aria-live="polite">{copied}</span>
      </p>
      <p>
        <Link to={`/admin/webhooks/${created.webhook_id}`}>Open the new webhook</Link> ·{' '}
        <button type="button" onClick={onDismiss}>
          I have stored the secret
        </button>
      </p>
    </div>
  );
}

export function CreateWebhookForm() {
  const id = useId();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [description, setDescription] = useState('');
  const [enabled, setEnabled] = useState(true);
  const [problems, setProblems] = useState<string[]>([]);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const m = useMutation({
    ...createWebhookMutation(),
    onSuccess: async (w) => {
      setCreated(w);
      setUrl('');
      setDescription('');
      setEvents('*');
      await invalidateWebhookReads(queryClient);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    const found: string[] = [];
    const patterns = events.split(/[\s,]+/).filter(Boolean);
    let parsed: URL | null = null;
    try {
      parsed = new URL(url.trim());
    } catch {
      parsed = null;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol)) found.push('Enter the receiver’s address, starting with https:// (or http://).');
    else if (parsed.username || parsed.password) found.push('The address may not carry a user name or password.');
    if (!patterns.length) found.push('Name at least one event: an action such as member.added, a category such as tenant.*, or * for all.');
    const bad = patterns.filter((p) => !PATTERN.test(p));
    if (bad.length) found.push(`${bad.join(', ')} ${bad.length === 1 ? 'is not an event pattern' : 'are not event patterns'}: write an action (member.added), a category (tenant.*) or *.`);
    setProblems(found);
    if (found.length) return;
    setCreated(null);
    m.mutate({ body: { url: url.trim(), events: patterns, enabled, ...(description.trim() ? { description: description.trim() } : {}) } });
  }
  return (
    <section aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Add a webhook</h2>
      {created ? <SecretOnce created={created} onDismiss={() => setCreated(null)} /> : null}
      <form onSubmit={submit} noValidate>
        <Problems list={problems} />
        <div className="field">
          <label htmlFor={`${id}-url`}>Receiver URL</label>
          <input id={`${id}-url`} type="url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://hooks.example.com/tenant-service" />
        </div>
        <div className="field">
          <label htmlFor={`${id}-events`}>Events</label>
          <input id={`${id}-events`} value={events} onChange={(e) => setEvents(e.target.value)} spellCheck={false} aria-describedby={`${id}-events-hint`} />
          <span className="hint" id={`${id}-events-hint`}>
            Separated by spaces or commas: actions (member.added), categories (tenant.*) or * for every event.
          </span>
        </div>
        <div className="field">
          <label htmlFor={`${id}-desc`}>Description</label>
          <input id={`${id}-desc`} value={description} maxLength={500} onChange={(e) => setDescription(e.target.value)} />
        </div>
        <div className="field">
          <span>
            <input id={`${id}-enabled`} type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> <label htmlFor={`${id}-enabled`}>Send deliveries at once</label>
          </span>
        </div>
        <button type="submit" className="primary" disabled={m.isPending}>
          {m.isPending ? 'Creating…' : 'Create the webhook'}
        </button>
        <ErrorNotice error={m.error} title="The webhook was not created" />
      </form>
    </section>
  );
}
