/**
 * What can be done to a webhook endpoint from its row or its page: enable or disable it
 * (disabling holds its pending deliveries) and delete it after a confirmation.
 */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { deleteWebhookMutation, updateWebhookMutation } from '@generated/@tanstack/react-query.gen';
import type { Webhook } from '@generated/types.gen';
import { ConfirmDialog } from '../ConfirmDialog';
import { ErrorNotice } from '../ErrorNotice';

const WEBHOOK_READS = new Set(['listWebhooks', 'getWebhook', 'listWebhookDeliveries', 'listEvents']);

export function invalidateWebhookReads(queryClient: ReturnType<typeof useQueryClient>): Promise<void> {
  return queryClient.invalidateQueries({
    predicate: (q) => {
      const key = q.queryKey[0] as { _id?: string } | undefined;
      return typeof key?._id === 'string' && WEBHOOK_READS.has(key._id);
    },
  });
}

/** The endpoint's name in a sentence: its description, else its URL. */
export function webhookName(w: Webhook): string {
  return w.description || w.url;
}

export function ToggleWebhook({ webhook, onDone }: { webhook: Webhook; onDone?: (message: string) => void }) {
  const queryClient = useQueryClient();
  const m = useMutation({
    ...updateWebhookMutation(),
    onSuccess: async (w) => {
      onDone?.(w.enabled ? `${webhookName(w)} enabled: held deliveries go out now.` : `${webhookName(w)} disabled: its deliveries are held until it is enabled again.`);
      await invalidateWebhookReads(queryClient);
    },
  });
  const label = webhook.enabled ? 'Disable' : 'Enable';
  return (
    <>
      <button type="button" disabled={m.isPending} aria-label={`${label} ${webhookName(webhook)}`} onClick={() => m.mutate({ path: { webhook_id: webhook.webhook_id }, body: { enabled: !webhook.enabled } })}>
        {m.isPending ? 'Saving…' : label}
      </button>
      <ErrorNotice error={m.error} title={`${label} failed`} />
    </>
  );
}

export function DeleteWebhook({ webhook, onDeleted }: { webhook: Webhook; onDeleted: (message: string) => void }) {
  const queryClient = useQueryClient();
  const [open, setOpen] = useState(false);
  const m = useMutation({
    ...deleteWebhookMutation(),
    onSuccess: async () => {
      setOpen(false);
      queryClient.removeQueries({ predicate: (q) => JSON.stringify(q.queryKey).includes(webhook.webhook_id) });
      onDeleted(`Webhook ${webhookName(webhook)} deleted; its pending deliveries will not be sent.`);
      await invalidateWebhookReads(queryClient);
    },
  });
  return (
    <>
      <button type="button" className="danger" aria-label={`Delete ${webhookName(webhook)}`} onClick={() => setOpen(true)}>
        Delete
      </button>
      <ConfirmDialog
        open={open}
        title="Delete this webhook?"
        confirmLabel="Delete the webhook"
        busy={m.isPending}
        onConfirm={() => m.mutate({ path: { webhook_id: webhook.webhook_id } })}
        onCancel={() => {
          setOpen(false);
          m.reset();
        }}
      >
        <p>
          Events will no longer be sent to <code>{webhook.url}</code>, and its pending deliveries are dropped. This cannot be undone.
        </p>
        <ErrorNotice error={m.error} title="The webhook was not deleted" />
      </ConfirmDialog>
    </>
  );
}
