/**
 * The SCIM protocol at /scim/v2 (docs/directory-sync.md#the-scim-api), over real HTTP: the token
 * names the tenant; discovery; users and groups with filter, paging, create, get, PUT, PATCH,
 * DELETE; SCIM error bodies for every refusal, which change nothing.
 */
import http from 'node:http';
import { once } from 'node:events';
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, ownerConnection, tokenFor, unique } from '../../helpers/factories';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_PUBLIC_URL: 'https://tenants.example.com' });
});
afterAll(async () => {
  await t.close();
  await closeOwnerConnection();
});

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

/** A tenant with an admin and a SCIM token. */
async function directory(): Promise<{ id: string; slug: string; admin: string; scim: string; tokenId: string }> {
  const slug = unique('scim');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const id = r.body.tenant_id as string;
  const a = await createUser(id, { role: 'admin' });
  const admin = `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}`;
  const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', admin).send({ description: 'test' }).expect(201);
  return { id, slug, admin, scim: `Bearer ${made.body.token}`, tokenId: made.body.token_id };
}

const scimUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER],
  userName,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: userName, type: 'work', primary: true }],
  active: true,
  ...extra,
});

function expectScimError(r: request.Response, status: number, scimType?: string): void {
  expect(r.status).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/scim\+json/);
  expect(r.body).toEqual({ schemas: [ERROR], status: String(status), ...(scimType ? { scimType } : {}), detail: expect.any(String) });
}

describe('paths and methods the contract does not declare', () => {
  it('an unknown path under /scim/v2 is a SCIM 404, with or without a token', async () => {
    const d = await directory();
    for (const path of ['/scim/v2/Foo', '/scim/v2/Users/x/y', '/scim/v2', '/scim/v2/', '/scim/v2/Groups/a/members']) {
      expectScimError(await request(t.app).get(path).set('Authorization', d.scim), 404);
      expectScimError(await request(t.app).get(path), 404);
    }
    expectScimError(await request(t.app).post('/scim/v2/Bulk').set('Authorization', d.scim).send({}), 404);
  });

  it('a method a SCIM path does not take is a SCIM 405', async () => {
    const d = await directory();
    const id = '00000000-0000-4000-8000-000000000000';
    expectScimError(await request(t.app).delete('/scim/v2/Users').set('Authorization', d.scim), 405);
    expectScimError(await request(t.app).put('/scim/v2/Groups').set('Authorization', d.scim).send({}), 405);
    expectScimError(await request(t.app).post(`/scim/v2/Users/${id}`).set('Authorization', d.scim).send({}), 405);
    expectScimError(await request(t.app).patch('/scim/v2/ServiceProviderConfig').set('Authorization', d.scim).send({}), 405);
  });

  it('paths outside /scim/v2 keep the service error body', async () => {
    const r = await request(t.app).get('/scim/v3/Users').expect(404);
    expect(r.body.schemas).toBeUndefined();
    const api = await request(t.app).get('/api/nothing-here').set('Authorization', `Bearer ${adminToken()}`).expect(404);
    expect(api.body.schemas).toBeUndefined();
    expect(api.body.error).toBe('Not found');
  });
});

describe('authentication', () => {
  it('a missing, malformed, unknown or revoked token is a SCIM 401; a JWT is not a SCIM token', async () => {
    const d = await directory();
    expectScimError(await request(t.app).get('/scim/v2/Users'), 401);
    expectScimError(await request(t.app).get('/scim/v2/Users').set('Authorization', 'Bearer scim_nope'), 401);
    expectScimError(await request(t.app).get('/scim/v2/Users').set('Authorization', `Bearer ${tokenFor({ sub: unique('u') })}`), 401);
    await request(t.app).get('/scim/v2/Users').set('Authorization', d.scim).expect(200);
    await request(t.app).delete(`/api/tenant/scim/tokens/${d.tokenId}`).set('Authorization', d.admin).expect(204);
    expectScimError(await request(t.app).get('/scim/v2/Users').set('Authorization', d.scim), 401);
  });

  it("another tenant's token sees none of this tenant's users or groups, and cannot touch them", async () => {
    const a = await directory();
    const b = await directory();
    const user = await request(t.app).post('/scim/v2/Users').set('Authorization', a.scim).send(scimUser(`${unique('iso')}@a.example`)).expect(201);
    const group = await request(t.app).post('/scim/v2/Groups').set('Authorization', a.scim).send({ displayName: 'A only', members: [{ value: user.body.id }] }).expect(201);
    expect((await request(t.app).get('/scim/v2/Users').set('Authorization', b.scim).expect(200)).body.totalResults).toBe(0);
    expect((await request(t.app).get('/scim/v2/Groups').set('Authorization', b.scim).expect(200)).body.totalResults).toBe(0);
    expectScimError(await request(t.app).get(`/scim/v2/Users/${user.body.id}`).set('Authorization', b.scim), 404);
    expectScimError(await request(t.app).delete(`/scim/v2/Users/${user.body.id}`).set('Authorization', b.scim), 404);
    expectScimError(await request(t.app).patch(`/scim/v2/Groups/${group.body.id}`).set('Authorization', b.scim).send({ schemas: [PATCH], Operations: [{ op: 'remove', path: 'members' }] }), 404);
    // B's group cannot take A's user as a member.
    expectScimError(await request(t.app).post('/scim/v2/Groups').set('Authorization', b.scim).send({ displayName: 'B', members: [{ value: user.body.id }] }), 400, 'invalidValue');
    expect((await request(t.app).get(`/scim/v2/Groups/${group.body.id}`).set('Authorization', a.scim).expect(200)).body.members).toHaveLength(1);
  });
});

describe('tenant status', () => {
  it('a suspended tenant is a SCIM 403 for its directory; reactivated, it answers again', async () => {
    const d = await directory();
    const admin = `Bearer ${adminToken()}`;
    await request(t.app).post(`/api/setup/tenant/${d.id}/suspend`).set('Authorization', admin).send({ reason: 'Invoice unpaid' }).expect(200);
    const r = await request(t.app).get('/scim/v2/Users').set('Authorization', d.scim);
    expectScimError(r, 403);
    expect(r.body.detail).not.toContain('Invoice');
    await request(t.app).post(`/api/setup/tenant/${d.id}/reactivate`).set('Authorization', admin).expect(200);
    await request(t.app).get('/scim/v2/Users').set('Authorization', d.scim).expect(200);
  });

  it('a tenant scheduled for deletion refuses its directory with the entry decision\'s refusal; cancelled, it answers again', async () => {
    const d = await directory();
    const admin = `Bearer ${adminToken()}`;
    await request(t.app).post(`/api/setup/tenant/${d.id}/scheduled-deletion`).set('Authorization', admin).send({ grace_days: 5 }).expect(200);
    const r = await request(t.app).get('/scim/v2/Users').set('Authorization', d.scim);
    expectScimError(r, 403);
    // The member's own request is refused with the same words.
    const member = await request(t.app).get('/api/tenant').set('Authorization', d.admin).set('X-Tenant', d.slug).expect(403);
    expect(r.body.detail).toBe(`Tenant '${d.slug}' is suspended: it is scheduled for deletion.`);
    expect(member.body.detail).toBe(r.body.detail);
    await request(t.app).delete(`/api/setup/tenant/${d.id}/scheduled-deletion`).set('Authorization', admin).expect(200);
    await request(t.app).get('/scim/v2/Users').set('Authorization', d.scim).expect(200);
  });
});

describe('discovery', () => {
  it('ServiceProviderConfig, ResourceTypes and Schemas', async () => {
    const d = await directory();
    const spc = await request(t.app).get('/scim/v2/ServiceProviderConfig').set('Authorization', d.scim).expect(200);
    expect(spc.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(spc.body).toMatchObject({ patch: { supported: true }, filter: { supported: true, maxResults: 200 }, bulk: { supported: false } });
    const types = await request(t.app).get('/scim/v2/ResourceTypes').set('Authorization', d.scim).expect(200);
    expect(types.body.Resources.map((r: { name: string }) => r.name)).toEqual(['User', 'Group']);
    const schemas = await request(t.app).get('/scim/v2/Schemas').set('Authorization', d.scim).expect(200);
    // User, Group and the enterprise extension (accepted, not kept).
    expect(schemas.body.totalResults).toBe(3);
  });
});

describe('users', () => {
  it('create, filter, get, PUT, PATCH and DELETE, each recorded with the directory as actor', async () => {
    const d = await directory();
    const userName = `${unique('ada')}@example.com`;
    const made = await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).set('Content-Type', 'application/scim+json').send(JSON.stringify(scimUser(userName, { externalId: 'ext-1' }))).expect(201);
    expect(made.body).toMatchObject({ schemas: [USER], userName, externalId: 'ext-1', active: true, groups: [], meta: { resourceType: 'User', location: `https://tenants.example.com/scim/v2/Users/${made.body.id}` } });
    expect(made.headers.location).toBe(made.body.meta.location);

    for (const filter of [`userName eq "${userName.toUpperCase()}"`, 'externalId eq "ext-1"', `emails.value eq "${userName}"`, `emails[value eq "${userName}"]`]) {
      const found = await request(t.app).get('/scim/v2/Users').query({ filter, startIndex: 1, count: 100 }).set('Authorization', d.scim).expect(200);
      expect({ filter, ids: found.body.Resources.map((r: { id: string }) => r.id), total: found.body.totalResults }).toEqual({ filter, ids: [made.body.id], total: 1 });
    }
    const none = await request(t.app).get('/scim/v2/Users').query({ filter: 'userName eq "nobody@example.com"' }).set('Authorization', d.scim).expect(200);
    expect(none.body).toEqual({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 0, itemsPerPage: 0, startIndex: 1, Resources: [] });

    const got = await request(t.app).get(`/scim/v2/Users/${made.body.id}`).query({ excludedAttributes: 'groups,emails' }).set('Authorization', d.scim).expect(200);
    expect(got.body.emails).toBeUndefined();
    expect(got.body.groups).toBeUndefined();
    expect(got.body.userName).toBe(userName);

    const put = await request(t.app).put(`/scim/v2/Users/${made.body.id}`).set('Authorization', d.scim).send(scimUser(userName, { displayName: 'Ada L.', active: false })).expect(200);
    expect(put.body).toMatchObject({ displayName: 'Ada L.', active: false });
    expect(put.body.externalId).toBeUndefined();

    const patched = await request(t.app)
      .patch(`/scim/v2/Users/${made.body.id}`)
      .set('Authorization', d.scim)
      .send({ schemas: [PATCH], Operations: [{ op: 'Replace', path: 'active', value: 'True' }, { op: 'Add', path: 'externalId', value: 'ext-2' }] })
      .expect(200);
    expect(patched.body).toMatchObject({ active: true, externalId: 'ext-2' });

    await request(t.app).delete(`/scim/v2/Users/${made.body.id}`).set('Authorization', d.scim).expect(204);
    expectScimError(await request(t.app).get(`/scim/v2/Users/${made.body.id}`).set('Authorization', d.scim), 404);

    const events = await ownerConnection()('events').where({ tenant_id: d.id, target_id: made.body.id }).orderBy('occurred_at').select('action', 'actor_scim_token_id', 'actor_subject');
    expect(events.map((e) => e.action)).toEqual(['member.provisioned', 'member.updated', 'member.deactivated', 'member.updated', 'member.reactivated', 'member.removed']);
    for (const e of events) expect(e).toMatchObject({ actor_scim_token_id: d.tokenId, actor_subject: null });
    const listed = await request(t.app).get('/api/tenant/events').query({ action: 'member.provisioned' }).set('Authorization', d.admin).expect(200);
    expect(listed.body.events[0].actor).toEqual({ directory: true, token_id: d.tokenId, platform_admin: false });
  });

  it('a taken userName (compared trimmed, NFKC, case-insensitively) is 409 uniqueness', async () => {
    const d = await directory();
    const userName = `${unique('dup')}@example.com`;
    await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).send(scimUser(userName)).expect(201);
    expectScimError(await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).send(scimUser(` ${userName.toUpperCase()} `)), 409, 'uniqueness');
    expect((await request(t.app).get('/scim/v2/Users').set('Authorization', d.scim).expect(200)).body.totalResults).toBe(1);
  });

  it('pages with startIndex and count (at most 200)', async () => {
    const d = await directory();
    for (let i = 0; i < 5; i++) await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).send(scimUser(`${unique(`p${i}`)}@example.com`)).expect(201);
    const page = await request(t.app).get('/scim/v2/Users').query({ startIndex: 2, count: 2 }).set('Authorization', d.scim).expect(200);
    expect(page.body).toMatchObject({ totalResults: 5, itemsPerPage: 2, startIndex: 2 });
    const last = await request(t.app).get('/scim/v2/Users').query({ startIndex: 5, count: 1000 }).set('Authorization', d.scim).expect(200);
    expect(last.body).toMatchObject({ totalResults: 5, itemsPerPage: 1, startIndex: 5 });
    const counted = await request(t.app).get('/scim/v2/Users').query({ count: 0 }).set('Authorization', d.scim).expect(200);
    expect(counted.body).toMatchObject({ totalResults: 5, itemsPerPage: 0 });
  });

  it('malformed filters, paths and bodies are SCIM 400s and change nothing', async () => {
    const d = await directory();
    const made = await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).send(scimUser(`${unique('bad')}@example.com`)).expect(201);
    const before = await request(t.app).get(`/scim/v2/Users/${made.body.id}`).set('Authorization', d.scim).expect(200);
    for (const filter of ['userName eq', 'userName xx "a"', 'profileUrl eq "x"', 'active gt true', 'userName eq "a" or (']) {
      expectScimError(await request(t.app).get('/scim/v2/Users').query({ filter }).set('Authorization', d.scim), 400, 'invalidFilter');
    }
    const patch = (Operations: unknown) => request(t.app).patch(`/scim/v2/Users/${made.body.id}`).set('Authorization', d.scim).send({ schemas: [PATCH], Operations });
    expectScimError(await patch([{ op: 'replace', path: 'emails[type eq]', value: 'x' }]), 400, 'invalidPath');
    expectScimError(await patch([{ op: 'replace', path: 'not a path!', value: 'x' }]), 400, 'invalidPath');
    expectScimError(await patch([{ op: 'remove' }]), 400, 'noTarget');
    expectScimError(await patch([{ op: 'replace', path: 'active', value: 'maybe' }]), 400, 'invalidValue');
    expectScimError(await patch([{ op: 'move', path: 'active', value: true }]), 400, 'invalidSyntax');
    expectScimError(await patch([]), 400, 'invalidSyntax');
    expectScimError(await patch([{ op: 'replace', path: 'userName', value: '' }]), 400, 'invalidValue');
    expectScimError(await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).send({ schemas: [USER] }), 400, 'invalidValue');
    expectScimError(await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).set('Content-Type', 'application/scim+json').send('{"userName":'), 400, 'invalidSyntax');
    expectScimError(await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).set('Content-Type', 'text/plain').send('x'), 415);
    expectScimError(await request(t.app).post('/scim/v2/Users').set('Authorization', d.scim).send({ userName: 'x'.repeat(2_000_000) }), 413);
    expectScimError(await request(t.app).get('/scim/v2/Users/not-a-uuid').set('Authorization', d.scim), 404);
    const after = await request(t.app).get(`/scim/v2/Users/${made.body.id}`).set('Authorization', d.scim).expect(200);
    expect(after.body).toEqual(before.body);
  });
});

describe('rate limit', () => {
  it('counts 1 200 requests a minute per SCIM token: one token spent leaves another untouched', async () => {
    const limited = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true', SERVICE_RATE_LIMIT_ENABLED: 'true' });
    try {
      const a = await directory();
      const b = await directory();
      // One listening server for the whole count (supertest would start one per request).
      const server = http.createServer(limited.app).listen(0, '127.0.0.1');
      await once(server, 'listening');
      const get = (token: string) => request(server).get('/scim/v2/ServiceProviderConfig').set('Authorization', token);
      // Spend the token's minute, 8 requests at a time: the first answer says how many the
      // window has left, exactly that many more follow, every one answered 200, the last with
      // X-RateLimit-Remaining 0. A busy machine may take longer than the minute: the count then
      // went on in a new window (no answer says 0, or the next answer opens a window), and the
      // round starts again, so the request after the count is the 1 201st of one window.
      let spent: request.Response | undefined;
      try {
        for (let round = 0; round < 3 && !spent; round++) {
          const first = await get(a.scim);
          expect(first.status).toBe(200);
          expect(first.headers['x-ratelimit-limit']).toBe('1200');
          let left = Number(first.headers['x-ratelimit-remaining']);
          let lowest = left;
          await Promise.all(
            Array.from({ length: 8 }, async () => {
              while (left > 0) {
                left--;
                const r = await get(a.scim);
                expect(r.status).toBe(200);
                lowest = Math.min(lowest, Number(r.headers['x-ratelimit-remaining']));
              }
            }),
          );
          if (lowest !== 0) continue; // the window ended during the count
          const next = await get(a.scim);
          if (next.status === 200 && next.headers['x-ratelimit-remaining'] === '1199') continue; // a new window began
          spent = next;
        }
      } finally {
        server.close();
      }
      if (!spent) throw new Error('no window of its own for the count in three tries');
      expectScimError(spent, 429);
      expect(spent.headers['retry-after']).toMatch(/^\d+$/);
      expect(spent.body.detail).toContain('per SCIM token');
      await request(limited.app).get('/scim/v2/ServiceProviderConfig').set('Authorization', b.scim).expect(200);
    } finally {
      await limited.close();
    }
  }, 300_000);
});
