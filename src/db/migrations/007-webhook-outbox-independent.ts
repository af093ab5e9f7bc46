/**
 * Webhook endpoints independent of every other writer (docs/events.md#webhooks).
 *
 * Every change in any tenant writes its outbox rows (webhook_deliveries) in the event's
 * statement. With a foreign key from those rows to webhook_endpoints, each such insert took a
 * KEY SHARE lock on the endpoint row, and deleting an endpoint (its cascade waiting for a
 * delivery the worker held during a 10 s attempt) made every tenant's writes wait on that lock,
 * then fail with a foreign-key violation. So:
 * - the foreign key goes: an outbox row of a deleted endpoint is never sent (the worker only
 *   claims deliveries of an existing, enabled endpoint) and is removed in small batches that
 *   skip rows the worker holds;
 * - the runtime role may delete outbox rows (their attempts go with them by their own cascade);
 * - an index finds each endpoint's next due delivery, for the per-endpoint claim.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
DO $$
DECLARE
  fk text;
BEGIN
  FOR fk IN
    SELECT conname FROM pg_constraint
     WHERE conrelid = 'webhook_deliveries'::regclass AND contype = 'f'
       AND confrelid = 'webhook_endpoints'::regclass
  LOOP
    EXECUTE format('ALTER TABLE webhook_deliveries DROP CONSTRAINT %I', fk);
  END LOOP;
END $$;
CREATE INDEX IF NOT EXISTS webhook_deliveries_pending_by_webhook
  ON webhook_deliveries (webhook_id, next_attempt_at, id) WHERE status = 'pending';
GRANT DELETE ON webhook_deliveries TO tenant_service_app;
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
REVOKE DELETE ON webhook_deliveries FROM tenant_service_app;
DROP INDEX IF EXISTS webhook_deliveries_pending_by_webhook;
DELETE FROM webhook_deliveries d WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = d.webhook_id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_webhook_id_fkey
  FOREIGN KEY (webhook_id) REFERENCES webhook_endpoints (id) ON DELETE CASCADE;
`);
}
