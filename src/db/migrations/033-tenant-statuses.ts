/**
 * A tenant's status is one of `tenant_statuses` (a foreign key), not of a list spelled in a check:
 * the rows come from the lifecycle table of the code (src/context/tenant-status.ts), inserted by
 * every migrate after the migrations (`ensureTenantStatuses` in src/db/database.ts), so a state
 * added to that table needs no migration (docs/architecture-operations.md#adding-a-lifecycle-state).
 * This migration inserts the four statuses of its time itself, as migrations import nothing.
 *
 * - `tenants.status` and `tenants.status_before_deletion` reference it; the status to restore
 *   after a cancelled deletion is never `pending_deletion` (a check).
 * - Rows are never deleted: a status dropped from the code may still be held by a tenant.
 */
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
CREATE TABLE tenant_statuses (
  status text PRIMARY KEY CHECK (status ~ '^[a-z][a-z_]{0,39}$')
);
INSERT INTO tenant_statuses (status) VALUES ('active'), ('pending_approval'), ('suspended'), ('pending_deletion');
GRANT SELECT ON tenant_statuses TO tenant_service_app, tenant_service_reader;
ALTER TABLE tenants DROP CONSTRAINT tenants_status_check;
ALTER TABLE tenants ADD CONSTRAINT tenants_status_known FOREIGN KEY (status) REFERENCES tenant_statuses (status);
ALTER TABLE tenants DROP CONSTRAINT tenants_status_before_deletion_check;
ALTER TABLE tenants ADD CONSTRAINT tenants_status_before_deletion_known FOREIGN KEY (status_before_deletion) REFERENCES tenant_statuses (status);
ALTER TABLE tenants ADD CONSTRAINT tenants_status_before_deletion_check CHECK (status_before_deletion <> 'pending_deletion');
`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
ALTER TABLE tenants DROP CONSTRAINT tenants_status_before_deletion_check;
ALTER TABLE tenants DROP CONSTRAINT tenants_status_before_deletion_known;
ALTER TABLE tenants ADD CONSTRAINT tenants_status_before_deletion_check CHECK (status_before_deletion IS NULL OR status_before_deletion IN ('active', 'pending_approval', 'suspended'));
ALTER TABLE tenants DROP CONSTRAINT tenants_status_known;
ALTER TABLE tenants ADD CONSTRAINT tenants_status_check CHECK (status IN ('active', 'pending_approval', 'suspended', 'pending_deletion'));
DROP TABLE tenant_statuses;
`);
}
