/**
 * `tenantctl events list` as users run it: the compiled binary against a listening server on
 * the test database (the admin token is minted from the test data dir's local key).
 */
import request from 'supertest';
import type { Event } from '../../generated/types.gen';
import { contractProblem } from '../helpers/contract';
import type { TestApp } from '../helpers/app';
import { startCliServer, type CliServer } from '../helpers/cli';
import { adminToken, unique } from '../helpers/factories';

jest.setTimeout(180_000);

let t: TestApp;
let cli: CliServer;
const tenantctl = (args: string[]) => cli.tenantctl(args);

beforeAll(async () => {
  cli = await startCliServer({ SERVICE_MULTI_TENANT_MODE: 'true' });
  ({ t } = cli);
}, 180_000);
afterAll(async () => {
  await cli.close();
});

it('lists a tenant\'s events newest first as JSON and as a table, filtered by action and time', async () => {
  const slug = unique('cli-ev');
  const admin = `Bearer ${adminToken()}`;
  const created = await request(t.app).post('/api/setup/tenant').set('Authorization', admin).send({ name: 'CLI Events', slug }).expect(201);
  const id = created.body.tenant_id as string;
  await request(t.app).put(`/api/setup/tenant/${id}`).set('Authorization', admin).send({ name: 'CLI Events 2' }).expect(200);

  const json = await tenantctl(['events', 'list', '--tenant', slug, '--format', 'json']);
  expect(json.stderr).toBe('');
  expect(json.code).toBe(0);
  const parsed = JSON.parse(json.stdout) as { events: Event[] };
  expect(parsed.events.map((e) => e.action)).toEqual(['tenant.updated', 'tenant.created']);
  expect(contractProblem('GET', '/api/setup/events', { status: 200, headers: { 'content-type': 'application/json' }, body: { events: parsed.events, next_cursor: null } })).toBeNull();

  const table = await tenantctl(['events', 'list', '--tenant', id, '--action', 'tenant.created', '--since', '1h']);
  expect(table.code).toBe(0);
  const lines = table.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^TIME\s+ACTION\s+TENANT\s+ACTOR\s+TARGET$/);
  expect(lines.slice(1, -1).map((l) => l.split(/\s+/)[1])).toEqual(['tenant.created']);
  expect(lines.at(-1)).toBe('1 event');

  const future = await tenantctl(['events', 'list', '--tenant', slug, '--since', new Date(Date.now() + 3_600_000).toISOString()]);
  expect(future.stdout).toBe('No events.\n');
});

it('refuses bad flags (exit 2) and an unknown tenant slug (exit 1)', async () => {
  const bad = await tenantctl(['events', 'list', '--since', 'yesterday-ish']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/--since/);
  const unknown = await tenantctl(['events', 'list', '--tenant', unique('nobody')]);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toMatch(/no tenant with slug/);
});
