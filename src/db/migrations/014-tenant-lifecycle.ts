/**
 * A tenant's lifecycle (docs/operations.md#tenant-lifecycle):
 *
 * - `tenants.status` gains `suspended` and `pending_deletion`; both are refused like a tenant
 *   awaiting approval by the decision (src/tenancy/decide.ts), which reads the status through
 *   `app_tenant_facts` unchanged.
 * - `suspended_at`, `suspension_reason`: set while suspended (and kept while a suspended tenant
 *   waits for its deletion, so cancelling the deletion suspends it again).
 * - `delete_after`, `status_before_deletion`: the scheduled deletion and the status a cancel
 *   restores. `tenants_deletion_due` finds the due ones without a scan.
 * - `app_credit_seq_at_least`: an imported tenant keeps its credit transactions' `seq`; the
 *   shared identity sequence is moved past them so the tenant's next rows sort after them.
 *
 * Tables and roles are spelled literally: released migrations never import later constants.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
ALTER TABLE tenants DROP CONSTRAINT tenants_status_check;
ALTER TABLE tenants ADD CONSTRAINT tenants_status_check
  CHECK (status IN ('active', 'pending_approval', 'suspended', 'pending_deletion'));
ALTER TABLE tenants
  ADD COLUMN suspended_at timestamptz,
  ADD COLUMN suspension_reason text CHECK (suspension_reason IS NULL OR char_length(suspension_reason) BETWEEN 1 AND 500),
  ADD COLUMN delete_after timestamptz,
  ADD COLUMN status_before_deletion text CHECK (status_before_deletion IS NULL OR status_before_deletion IN ('active', 'pending_approval', 'suspended'));
ALTER TABLE tenants ADD CONSTRAINT tenants_deletion_scheduled
  CHECK ((status = 'pending_deletion') = (delete_after IS NOT NULL AND status_before_deletion IS NOT NULL));
CREATE INDEX tenants_deletion_due ON tenants (delete_after) WHERE status = 'pending_deletion';

CREATE FUNCTION app_credit_seq_at_least(p_seq bigint) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
DECLARE
  s text := pg_get_serial_sequence('public.credit_transactions', 'seq');
  last bigint;
BEGIN
  EXECUTE format('SELECT last_value FROM %s', s) INTO last;
  IF p_seq > last THEN
    PERFORM setval(s, p_seq, true);
  END IF;
END $$;
REVOKE ALL ON FUNCTION app_credit_seq_at_least(bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION app_credit_seq_at_least(bigint) TO tenant_service_app;
`);
}

export async function down(): Promise<void> {
  throw new Error('Migration 014 cannot be rolled back; restore a backup instead.');
}
