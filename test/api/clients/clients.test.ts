/**
 * The product's applications (docs/sign-in.md#clients), platform admins only:
 * - create (confidential: a secret shown once; public: none), list, get, patch, delete;
 * - every refusal of a redirect URI or a name is 400 naming the field, with nothing written;
 * - a built-in client cannot be changed or deleted (409); an unknown one is 404;
 * - a caller who is not a platform admin gets 403 on every operation, no token 401;
 * - the secret is never in a later answer nor in an event; rotating it returns a new one once;
 * - each change writes its event (client.created|updated|deleted).
 */
import request from 'supertest';
import { createClient } from '../../../src/domain/sign-in/clients';
import { withService } from '../../../src/db/tenant-scope';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
const adminSub = unique('clients-admin');
const admin = `Bearer ${adminToken(adminSub)}`;

beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const api = () => request(t.app);
const APP = 'https://app.example.com/callback';

function create(body: Record<string, unknown>) {
  return api().post('/api/setup/clients').set('Authorization', admin).send(body);
}

async function stored(clientId: string): Promise<{ client_secret: string | null; name: string } | undefined> {
  return (await ownerConnection()('oidc_clients').where({ client_id: clientId }).first('client_secret', 'name')) as { client_secret: string | null; name: string } | undefined;
}

async function eventsFor(clientId: string): Promise<Array<{ action: string; data: unknown; actor_subject: string; tenant_id: string | null }>> {
  return (await ownerConnection()('events').where({ target_type: 'client', target_id: clientId }).orderBy('occurred_at')) as Array<{
    action: string;
    data: unknown;
    actor_subject: string;
    tenant_id: string | null;
  }>;
}

describe('registering, reading, changing and deleting clients', () => {
  it('a confidential client gets a secret once: never in a later answer, an event, or the list', async () => {
    const res = await create({ name: ' Invoices ', type: 'confidential', redirect_uris: [APP, 'http://127.0.0.1:3000/cb'], post_logout_redirect_uris: ['https://app.example.com/'] }).expect(201);
    const c = res.body as Record<string, unknown>;
    expect(c).toMatchObject({
      name: 'Invoices',
      type: 'confidential',
      redirect_uris: [APP, 'http://127.0.0.1:3000/cb'],
      post_logout_redirect_uris: ['https://app.example.com/'],
      built_in: false,
    });
    expect(c.client_id).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const secret = c.client_secret as string;
    expect(secret.length).toBeGreaterThanOrEqual(43);
    const id = c.client_id as string;

    const got = await api().get(`/api/setup/clients/${id}`).set('Authorization', admin).expect(200);
    expect(got.body).not.toHaveProperty('client_secret');
    expect(got.body).toMatchObject({ client_id: id, name: 'Invoices', created_at: c.created_at });
    const list = await api().get('/api/setup/clients').set('Authorization', admin).expect(200);
    expect(JSON.stringify(list.body)).not.toContain(secret);
    expect((list.body.clients as Array<{ client_id: string }>).map((x) => x.client_id)).toContain(id);

    const events = await eventsFor(id);
    expect(events.map((e) => e.action)).toEqual(['client.created']);
    expect(events[0]).toMatchObject({ actor_subject: adminSub, tenant_id: null, data: { client: { client_id: id, name: 'Invoices', type: 'confidential' } } });
    expect(JSON.stringify(events)).not.toContain(secret);
  });

  it('a public client has no secret and may use a private-use scheme (a native app)', async () => {
    const res = await create({ name: 'Mobile', type: 'public', redirect_uris: ['com.example.app:/callback', 'http://[::1]:8123/cb', 'http://localhost/cb'] }).expect(201);
    expect(res.body).not.toHaveProperty('client_secret');
    expect(res.body.post_logout_redirect_uris).toEqual([]);
    expect((await stored(res.body.client_id as string))!.client_secret).toBeNull();
  });

  it('PATCH changes the fields present; rotate_secret answers a new secret once', async () => {
    const made = (await create({ name: 'Billing', type: 'confidential', redirect_uris: [APP] }).expect(201)).body as { client_id: string; client_secret: string; updated_at: string };
    const id = made.client_id;
    const before = (await stored(id))!.client_secret;
    const renamed = await api().patch(`/api/setup/clients/${id}`).set('Authorization', admin).send({ name: 'Billing 2', post_logout_redirect_uris: ['https://app.example.com/bye'] }).expect(200);
    expect(renamed.body).toMatchObject({ name: 'Billing 2', redirect_uris: [APP], post_logout_redirect_uris: ['https://app.example.com/bye'] });
    expect(renamed.body).not.toHaveProperty('client_secret');
    expect(Date.parse(renamed.body.updated_at as string)).toBeGreaterThanOrEqual(Date.parse(made.updated_at));
    expect((await stored(id))!.client_secret).toBe(before);

    const rotated = await api().patch(`/api/setup/clients/${id}`).set('Authorization', admin).send({ rotate_secret: true }).expect(200);
    const fresh = rotated.body.client_secret as string;
    expect(fresh).toBeTruthy();
    expect(fresh).not.toBe(made.client_secret);
    expect((await stored(id))!.client_secret).not.toBe(before);
    const again = await api().get(`/api/setup/clients/${id}`).set('Authorization', admin).expect(200);
    expect(again.body).not.toHaveProperty('client_secret');

    const events = await eventsFor(id);
    expect(events.map((e) => e.action)).toEqual(['client.created', 'client.updated', 'client.updated']);
    expect(events[1]!.data).toEqual({ before: { name: 'Billing', post_logout_redirect_uris: [] }, after: { name: 'Billing 2', post_logout_redirect_uris: ['https://app.example.com/bye'] } });
    expect(events[2]!.data).toEqual({ before: {}, after: {}, secret_rotated: true });
    expect(JSON.stringify(events)).not.toContain(fresh);
    expect(JSON.stringify(events)).not.toContain(made.client_secret);
  });

  it('DELETE removes the client (204), then it is 404; event client.deleted', async () => {
    const id = ((await create({ name: 'Gone', type: 'public', redirect_uris: [APP] }).expect(201)).body as { client_id: string }).client_id;
    await api().delete(`/api/setup/clients/${id}`).set('Authorization', admin).expect(204);
    expect(await stored(id)).toBeUndefined();
    await api().get(`/api/setup/clients/${id}`).set('Authorization', admin).expect(404);
    await api().delete(`/api/setup/clients/${id}`).set('Authorization', admin).expect(404);
    await api().patch(`/api/setup/clients/${id}`).set('Authorization', admin).send({ name: 'x' }).expect(404);
    expect((await eventsFor(id)).map((e) => e.action)).toEqual(['client.created', 'client.deleted']);
  });

  it('a built-in client is listed with built_in: true and cannot be changed or deleted (409)', async () => {
    const clientId = unique('builtin').replace(/[^A-Za-z0-9_-]/g, '');
    await withService(t.db, (trx) => createClient(trx, t.config, { name: 'Console', type: 'public', redirect_uris: ['http://127.0.0.1:8080/console/'] }, { clientId, builtIn: true }));
    const list = await api().get('/api/setup/clients').set('Authorization', admin).expect(200);
    expect((list.body.clients as Array<{ client_id: string; built_in: boolean }>).find((c) => c.client_id === clientId)).toMatchObject({ built_in: true });
    const patch = await api().patch(`/api/setup/clients/${clientId}`).set('Authorization', admin).send({ name: 'Mine now' }).expect(409);
    expect(patch.body.detail).toContain('built in');
    await api().delete(`/api/setup/clients/${clientId}`).set('Authorization', admin).expect(409);
    expect((await stored(clientId))!.name).toBe('Console');
  });
});

describe('refusals: 400 naming the field, nothing written', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['a relative redirect URI', { redirect_uris: ['/callback'] }, 'body.redirect_uris[0]'],
    ['a fragment', { redirect_uris: [`${APP}#x`] }, 'body.redirect_uris[0]'],
    ['an empty fragment', { redirect_uris: [APP, `${APP}#`] }, 'body.redirect_uris[1]'],
    ['http on a public host', { redirect_uris: ['http://app.example.com/cb'] }, 'body.redirect_uris[0]'],
    ['http on a private address', { redirect_uris: ['http://10.0.0.1/cb'] }, 'body.redirect_uris[0]'],
    ['credentials in the URI', { redirect_uris: ['https://u:p@app.example.com/cb'] }, 'body.redirect_uris[0]'],
    ['a custom scheme on a confidential client', { redirect_uris: ['com.example.app:/cb'] }, 'body.redirect_uris[0]'],
    ['javascript:', { type: 'public', redirect_uris: ['javascript:alert(1)'] }, 'body.redirect_uris[0]'],
    ['a repeated URI', { redirect_uris: [APP, APP] }, 'body.redirect_uris[1]'],
    ['no redirect URI', { redirect_uris: [] }, 'redirect_uris'],
    ['21 redirect URIs', { redirect_uris: Array.from({ length: 21 }, (_, i) => `${APP}/${i}`) }, 'redirect_uris'],
    ['a URI over 2000 characters', { redirect_uris: [`${APP}?${'a'.repeat(2000)}`] }, 'redirect_uris'],
    ['a bad logout URI', { post_logout_redirect_uris: ['http://app.example.com/'] }, 'body.post_logout_redirect_uris[0]'],
    ['an empty name', { name: '' }, 'name'],
    ['a blank name', { name: '   ' }, 'body.name'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
    ['an unknown type', { type: 'spa' }, 'type'],
    ['an unknown field', { client_secret: 'mine' }, 'client_secret'],
  ];

  it.each(cases)('%s', async (_what, override, field) => {
    const name = unique('refused');
    const res = await create({ name, type: 'confidential', redirect_uris: [APP], ...override }).expect(400);
    expect(res.body.error).toBe('Validation error');
    expect(res.body.detail).toContain(field);
    expect(await ownerConnection()('oidc_clients').where({ name }).first('client_id')).toBeUndefined();
  });

  it('PATCH keeps the same rules, refuses a type change, and a rotation of a public client', async () => {
    const id = ((await create({ name: 'Patchable', type: 'public', redirect_uris: [APP] }).expect(201)).body as { client_id: string }).client_id;
    const patch = (body: object) => api().patch(`/api/setup/clients/${id}`).set('Authorization', admin).send(body);
    expect((await patch({ redirect_uris: ['http://evil.example/cb'] }).expect(400)).body.detail).toContain('body.redirect_uris[0]');
    expect((await patch({ name: 'ok', redirect_uris: [] }).expect(400)).body.detail).toContain('redirect_uris');
    expect((await patch({ type: 'confidential' }).expect(400)).body.detail).toContain('type');
    expect((await patch({ rotate_secret: true }).expect(400)).body.detail).toContain('body.rotate_secret');
    await patch({}).expect(400);
    expect((await stored(id))!.name).toBe('Patchable');
    expect((await eventsFor(id)).map((e) => e.action)).toEqual(['client.created']);
  });

  it('a malformed client id is 400, an unknown one 404', async () => {
    await api().get('/api/setup/clients/has%20space').set('Authorization', admin).expect(400);
    await api().get(`/api/setup/clients/${'x'.repeat(65)}`).set('Authorization', admin).expect(400);
    await api().get('/api/setup/clients/no-such-client').set('Authorization', admin).expect(404);
  });
});

describe('who may call', () => {
  it('anyone but a platform admin gets 403 on every operation, and no token is 401', async () => {
    const id = ((await create({ name: 'Guarded', type: 'confidential', redirect_uris: [APP] }).expect(201)).body as { client_id: string }).client_id;
    const person = `Bearer ${tokenFor({ sub: unique('person') })}`;
    const calls = [
      () => api().get('/api/setup/clients'),
      () => api().post('/api/setup/clients').send({ name: 'x', type: 'public', redirect_uris: [APP] }),
      () => api().get(`/api/setup/clients/${id}`),
      () => api().patch(`/api/setup/clients/${id}`).send({ rotate_secret: true }),
      () => api().delete(`/api/setup/clients/${id}`),
    ];
    for (const call of calls) {
      await call().set('Authorization', person).expect(403);
      await call().expect(401);
    }
    expect(await stored(id)).toBeDefined();
    expect((await eventsFor(id)).map((e) => e.action)).toEqual(['client.created']);
  });
});
