/**
 * Events (the audit log) and webhooks (endpoints, the delivery outbox and its attempts).
 *
 * - `events` is append-only. The runtime role may INSERT and SELECT only; a trigger refuses
 *   UPDATE for everyone and DELETE for everyone but the table owner running the retention purge
 *   (which sets `app.event_retention_cutoff` and may delete only rows older than it).
 * - `events.tenant_id` is null for platform-wide events (webhook changes) and has no foreign key:
 *   the events of a deleted tenant stay. Row-level security is enabled and forced: a tenant
 *   transaction (app.tenant_id set) sees and writes only its own tenant's events; platform-wide
 *   reads go through the BYPASSRLS reader role. A transaction without app.tenant_id (platform
 *   operations: creating, updating, deleting tenants, webhooks) may insert any tenant's event.
 * - `webhook_deliveries` is the transactional outbox: one row per (event, matching enabled
 *   endpoint), written in the event's own statement, carrying the payload to send, so the
 *   worker never reads `events` (and the retention purge never loses a pending delivery).
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE events (
  id uuid PRIMARY KEY,
  occurred_at timestamptz NOT NULL,
  action text NOT NULL CHECK (action ~ '^[a-z_]+\\.[a-z_]+$'),
  tenant_id uuid,
  actor_issuer text,
  actor_subject text,
  actor_email text,
  actor_platform_admin boolean NOT NULL DEFAULT false,
  target_type text NOT NULL,
  target_id text,
  request_id text,
  ip text,
  data jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX events_newest ON events (occurred_at DESC, id DESC);
CREATE INDEX events_tenant_newest ON events (tenant_id, occurred_at DESC, id DESC);
CREATE INDEX events_action_newest ON events (action, occurred_at DESC, id DESC);
CREATE INDEX events_actor_newest ON events (actor_subject, occurred_at DESC, id DESC);

ALTER TABLE events ENABLE ROW LEVEL SECURITY;
ALTER TABLE events FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON events FOR SELECT
  USING (tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid);
CREATE POLICY tenant_isolation_insert ON events FOR INSERT
  WITH CHECK (
    nullif(current_setting('app.tenant_id', true), '') IS NULL
    OR tenant_id = nullif(current_setting('app.tenant_id', true), '')::uuid
  );

-- The owner (the migrating user, which runs the retention purge) reads and deletes under forced
-- row-level security only through these; the trigger below still limits what it may delete.
DO $do$
BEGIN
  EXECUTE format('CREATE POLICY owner_read ON events FOR SELECT TO %I USING (true)', current_user);
  EXECUTE format('CREATE POLICY owner_retention_purge ON events FOR DELETE TO %I USING (true)', current_user);
END $do$;

CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  cutoff timestamptz := nullif(current_setting('app.event_retention_cutoff', true), '')::timestamptz;
BEGIN
  IF TG_OP = 'DELETE'
     AND cutoff IS NOT NULL
     AND OLD.occurred_at < cutoff
     AND pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'USAGE')
  THEN
    RETURN OLD; -- the owner's retention purge
  END IF;
  RAISE EXCEPTION 'events are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_append_only();

CREATE FUNCTION events_no_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events are append-only: TRUNCATE refused' USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_no_truncate();

CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  url text NOT NULL CHECK (char_length(url) <= 2048),
  description text CHECK (char_length(description) <= 500),
  event_types text[] NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 100),
  enabled boolean NOT NULL DEFAULT true,
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_created_order ON webhook_endpoints (created_at, id);

CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  webhook_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id uuid NOT NULL,
  event_type text NOT NULL,
  tenant_id uuid,
  payload jsonb NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  created_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  CONSTRAINT webhook_deliveries_once UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE status <> 'pending';

CREATE TABLE webhook_delivery_attempts (
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt integer NOT NULL,
  attempted_at timestamptz NOT NULL,
  status_code integer,
  duration_ms integer NOT NULL,
  error text,
  next_retry_at timestamptz,
  PRIMARY KEY (delivery_id, attempt)
);

GRANT SELECT, INSERT ON events TO tenant_service_app;
GRANT SELECT ON events TO tenant_service_reader;
GRANT SELECT, INSERT, UPDATE, DELETE ON webhook_endpoints TO tenant_service_app;
GRANT SELECT, INSERT, UPDATE ON webhook_deliveries, webhook_delivery_attempts TO tenant_service_app;
GRANT SELECT ON webhook_endpoints, webhook_deliveries, webhook_delivery_attempts TO tenant_service_reader;
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
DROP TABLE IF EXISTS webhook_delivery_attempts, webhook_deliveries, webhook_endpoints;
DROP TABLE IF EXISTS events;
DROP FUNCTION IF EXISTS events_append_only();
DROP FUNCTION IF EXISTS events_no_truncate();
`);
}
