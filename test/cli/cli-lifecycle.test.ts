/**
 * `tenantctl tenant suspend|reactivate|schedule-deletion|cancel-deletion|export|import` as users
 * run them: the compiled binary against a listening test app (platform admin token minted from
 * the test data dir's local key). Export to a file and to stdout, import from a file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import type { Tenant } from '../../generated/types.gen';
import { startCliServer, type CliServer } from '../helpers/cli';
import { adminToken, closeOwnerConnection, createTenant, ownerConnection } from '../helpers/factories';

jest.setTimeout(180_000);

let s: CliServer;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tenantctl-lifecycle-'));
beforeAll(async () => {
  s = await startCliServer();
});
afterAll(async () => {
  await s?.close();
  await closeOwnerConnection();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('suspend, reactivate, schedule-deletion and cancel-deletion print the tenant and change it', async () => {
  const tenant = await createTenant();
  const suspended = await s.tenantctl(['tenant', 'suspend', tenant.slug, '--reason', 'Invoice unpaid', '--format', 'json']);
  expect(suspended.code).toBe(0);
  expect(JSON.parse(suspended.stdout) as Tenant).toMatchObject({ status: 'suspended', suspension_reason: 'Invoice unpaid' });
  const again = await s.tenantctl(['tenant', 'suspend', tenant.slug, '--reason', 'twice']);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('Conflict');
  expect((await s.tenantctl(['tenant', 'reactivate', tenant.slug])).stdout).toMatch(/status\s+active/);
  const scheduled = await s.tenantctl(['tenant', 'schedule-deletion', tenant.slug, '--grace-days', '3', '--format', 'json']);
  expect(JSON.parse(scheduled.stdout) as Tenant).toMatchObject({ status: 'pending_deletion' });
  expect((await s.tenantctl(['tenant', 'schedule-deletion', tenant.slug, '--grace-days', '91'])).code).toBe(2);
  const cancelled = await s.tenantctl(['tenant', 'cancel-deletion', tenant.slug, '--format', 'json']);
  expect(JSON.parse(cancelled.stdout) as Tenant).toMatchObject({ status: 'active', delete_after: null });
  expect((await ownerConnection()('tenants').where({ id: tenant.id }).first('status')).status).toBe('active');
});

it('export to a file and to stdout gives the same rows; import restores a deleted tenant from the file', async () => {
  const created = await request(s.t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: 'Moving', slug: `moving-${Date.now()}`, include_sample_data: true }).expect(201);
  const slug = created.body.slug as string;
  const file = path.join(dir, `${slug}.ndjson`);
  const toFile = await s.tenantctl(['tenant', 'export', slug, '--output', file]);
  expect(toFile).toMatchObject({ code: 0, stdout: '' });
  // No terminal: no progress lines.
  expect(toFile.stderr).toBe('');
  const written = fs.readFileSync(file, 'utf8');
  expect(written.trim().split('\n').at(-1)).toMatch(/^\{"type":"end"/);
  expect(fs.existsSync(`${file}.partial`)).toBe(false);
  const toStdout = await s.tenantctl(['tenant', 'export', slug]);
  const rows = (text: string) => text.split('\n').filter((l) => l.includes('"type":"row"') && !l.includes('tenant.exported'));
  expect(rows(toStdout.stdout)).toEqual(rows(written));

  await request(s.t.app).delete(`/api/setup/tenant/${created.body.tenant_id}`).set('Authorization', `Bearer ${adminToken()}`).expect(200);
  const imported = await s.tenantctl(['tenant', 'import', file, '--format', 'json']);
  expect(imported.code).toBe(0);
  expect(JSON.parse(imported.stdout)).toMatchObject({ tenant_id: created.body.tenant_id, slug, counts: { tenants: 1, boards: 2 } });
  const twice = await s.tenantctl(['tenant', 'import', file]);
  expect(twice.code).toBe(1);
  expect(twice.stderr).toContain('Conflict');
  expect((await s.tenantctl(['tenant', 'import', path.join(dir, 'missing.ndjson')])).code).toBe(2);
});

it('a refused export leaves no file behind', async () => {
  const file = path.join(dir, 'nobody.ndjson');
  const r = await s.tenantctl(['tenant', 'export', '00000000-0000-4000-8000-000000000000', '--output', file]);
  expect(r.code).toBe(1);
  expect(fs.existsSync(file) || fs.existsSync(`${file}.partial`)).toBe(false);
});
