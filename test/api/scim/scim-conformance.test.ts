/**
 * SCIM 2.0 conformance (RFC 7643/7644; docs/directory-sync.md#the-scim-api), over real HTTP:
 * single resource types and schemas at the `meta.location` their lists name; the Group schema's
 * `members`; filters with every operator on every filterable attribute, with `and`, `or`, `not`
 * and parentheses in their precedence; `POST /.search`; a PATCH naming an unknown path or one
 * the client may not change is refused and changes nothing.
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createUser, tokenFor, unique } from '../../helpers/factories';

const BASE = 'https://tenants.example.com/scim/v2';
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
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';

async function directory(): Promise<string> {
  const slug = unique('conf');
  const r = await request(t.app).post('/api/setup/tenant').set('Authorization', `Bearer ${adminToken()}`).send({ name: slug, slug }).expect(201);
  const a = await createUser(r.body.tenant_id, { role: 'admin' });
  const admin = `Bearer ${tokenFor({ sub: a.subject, claims: { tenant: slug } })}`;
  const made = await request(t.app).post('/api/tenant/scim/tokens').set('Authorization', admin).send({ description: 'conformance' }).expect(201);
  return `Bearer ${made.body.token}`;
}

function expectScimError(r: request.Response, status: number, scimType?: string): void {
  expect({ status: r.status, body: r.body }).toEqual({ status, body: { schemas: [ERROR], status: String(status), ...(scimType ? { scimType } : {}), detail: expect.any(String) } });
}

/** Waits until the clock has passed a shown time, so the next write's lastModified is later (to the millisecond). */
async function after(iso: string): Promise<void> {
  while (Date.now() <= Date.parse(iso)) await new Promise((r) => setImmediate(r));
}

describe('discovery: single resources', () => {
  it('each resource type and schema is served at the meta.location its list names', async () => {
    const scim = await directory();
    const path = (location: string) => location.slice('https://tenants.example.com'.length);
    const types = (await request(t.app).get('/scim/v2/ResourceTypes').set('Authorization', scim).expect(200)).body;
    for (const rt of types.Resources) {
      const one = await request(t.app).get(path(rt.meta.location)).set('Authorization', scim).expect(200);
      expect(one.headers['content-type']).toMatch(/^application\/scim\+json/);
      expect(one.body).toEqual(rt);
    }
    const schemas = (await request(t.app).get('/scim/v2/Schemas').set('Authorization', scim).expect(200)).body;
    expect(schemas.Resources.map((s: { id: string }) => s.id)).toEqual([USER, GROUP, ENTERPRISE]);
    for (const s of schemas.Resources) expect((await request(t.app).get(path(s.meta.location)).set('Authorization', scim).expect(200)).body).toEqual(s);

    const user = (await request(t.app).get('/scim/v2/ResourceTypes/User').set('Authorization', scim).expect(200)).body;
    expect(user).toMatchObject({ id: 'User', endpoint: '/Users', schema: USER, schemaExtensions: [{ schema: ENTERPRISE, required: false }], meta: { location: `${BASE}/ResourceTypes/User` } });
    expect((await request(t.app).get(`/scim/v2/Schemas/${USER}`).set('Authorization', scim).expect(200)).body.meta.location).toBe(`${BASE}/Schemas/${USER}`);
    expectScimError(await request(t.app).get('/scim/v2/ResourceTypes/Robot').set('Authorization', scim), 404);
    expectScimError(await request(t.app).get('/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:Robot').set('Authorization', scim), 404);
  });

  it("the Group schema's members list value, display, $ref and type, as group answers carry them", async () => {
    const scim = await directory();
    const group = (await request(t.app).get(`/scim/v2/Schemas/${GROUP}`).set('Authorization', scim).expect(200)).body;
    const members = group.attributes.find((a: { name: string }) => a.name === 'members');
    expect(members.subAttributes.map((a: { name: string }) => a.name)).toEqual(['value', 'display', '$ref', 'type']);
    const u = await request(t.app).post('/scim/v2/Users').set('Authorization', scim).send({ userName: 'm@example.com' }).expect(201);
    const g = await request(t.app).post('/scim/v2/Groups').set('Authorization', scim).send({ displayName: 'G', members: [{ value: u.body.id }] }).expect(201);
    expect(Object.keys(g.body.members[0]).sort()).toEqual(['$ref', 'display', 'type', 'value']);
    // What the service accepts and does not keep is declared as such: written, never returned.
    const userSchema = (await request(t.app).get(`/scim/v2/Schemas/${USER}`).set('Authorization', scim).expect(200)).body;
    expect(userSchema.attributes.find((a: { name: string }) => a.name === 'profileUrl')).toMatchObject({ mutability: 'writeOnly', returned: 'never' });
    expect(userSchema.attributes.find((a: { name: string }) => a.name === 'title')).toMatchObject({ mutability: 'readWrite', returned: 'default' });
    expect(userSchema.attributes.find((a: { name: string }) => a.name === 'groups')).toMatchObject({ mutability: 'readOnly' });
  });
});

describe('filters', () => {
  let scim: string;
  let bobModified: string;
  const names = (r: request.Response) => r.body.Resources.map((x: { userName: string }) => x.userName.split('@')[0]);

  beforeAll(async () => {
    scim = await directory();
    const post = (body: Record<string, unknown>) => request(t.app).post('/scim/v2/Users').set('Authorization', scim).send({ schemas: [USER], ...body }).expect(201);
    const alice = await post({ userName: 'alice@x.example', externalId: 'ext-a', displayName: 'Alice Anders', emails: [{ value: 'alice@x.example' }] });
    await after(alice.body.meta.lastModified);
    const bob = await post({ userName: 'bob@y.example', externalId: 'ext-b', displayName: 'Bob Brown', emails: [{ value: 'bob@y.example' }], active: false });
    bobModified = bob.body.meta.lastModified;
    await after(bobModified);
    await post({ userName: 'carol@x.example', emails: [{ value: 'carol@x.example' }, { value: 'c.work@z.example', type: 'work' }] });
    await post({ userName: 'dave@y.example', externalId: 'ext-d', displayName: 'Dave Anders', emails: [{ value: 'dave@y.example' }] });
  });

  const cases: Array<[string, string[]]> = [
    ['userName eq "ALICE@x.example"', ['alice']],
    ['userName ne "alice@x.example"', ['bob', 'carol', 'dave']],
    ['userName co "@X."', ['alice', 'carol']],
    ['userName sw "B"', ['bob']],
    ['userName ew "y.example"', ['bob', 'dave']],
    ['userName pr', ['alice', 'bob', 'carol', 'dave']],
    ['userName gt "bob@y.example"', ['carol', 'dave']],
    ['userName ge "bob@y.example"', ['bob', 'carol', 'dave']],
    ['userName lt "bob@y.example"', ['alice']],
    ['userName le "bob@y.example"', ['alice', 'bob']],
    ['externalId eq "ext-a"', ['alice']],
    ['externalId eq "EXT-A"', []],
    ['externalId ne "ext-a"', ['bob', 'carol', 'dave']],
    ['externalId co "xt-"', ['alice', 'bob', 'dave']],
    ['externalId sw "ext-b"', ['bob']],
    ['externalId ew "-d"', ['dave']],
    ['externalId pr', ['alice', 'bob', 'dave']],
    ['externalId gt "ext-b"', ['dave']],
    ['externalId ge "ext-b"', ['bob', 'dave']],
    ['externalId lt "ext-b"', ['alice']],
    ['externalId le "ext-b"', ['alice', 'bob']],
    ['displayName eq "alice anders"', ['alice']],
    ['displayName ne "Alice Anders"', ['bob', 'carol', 'dave']],
    ['displayName co "anders"', ['alice', 'dave']],
    ['displayName sw "bob"', ['bob']],
    ['displayName ew "ANDERS"', ['alice', 'dave']],
    ['displayName pr', ['alice', 'bob', 'dave']],
    ['displayName gt "Bob Brown"', ['dave']],
    ['displayName ge "bob brown"', ['bob', 'dave']],
    ['displayName lt "Bob Brown"', ['alice']],
    ['displayName le "Bob Brown"', ['alice', 'bob']],
    ['active eq true', ['alice', 'carol', 'dave']],
    ['active eq false', ['bob']],
    ['active ne true', ['bob']],
    ['active pr', ['alice', 'bob', 'carol', 'dave']],
    ['emails.value eq "C.WORK@z.example"', ['carol']],
    ['emails.value ne "carol@x.example"', ['alice', 'bob', 'dave']],
    ['emails.value co "work"', ['carol']],
    ['emails.value sw "dave"', ['dave']],
    ['emails.value ew "@z.example"', ['carol']],
    ['emails.value pr', ['alice', 'bob', 'carol', 'dave']],
    ['emails.value gt "c"', ['carol', 'dave']],
    ['emails.value ge "dave@y.example"', ['dave']],
    ['emails.value lt "b"', ['alice']],
    ['emails.value le "bob@y.example"', ['alice', 'bob']],
    ['emails[value sw "bob"]', ['bob']],
    // and binds tighter than or; parentheses change that; not negates a whole group.
    ['userName sw "alice" or userName sw "dave" and active eq false', ['alice']],
    ['(userName sw "alice" or userName sw "dave") and active eq false', []],
    ['(userName sw "alice" or userName sw "dave") and active eq true', ['alice', 'dave']],
    ['active eq false or userName sw "carol" and externalId pr', ['bob']],
    ['not (externalId pr)', ['carol']],
    ['not (displayName co "anders")', ['bob', 'carol']],
    ['not (userName sw "a" or userName sw "b")', ['carol', 'dave']],
    ['not (active eq true) and userName pr', ['bob']],
    ['not (not (externalId eq "ext-a"))', ['alice']],
    ['urn:ietf:params:scim:schemas:core:2.0:User:userName sw "d"', ['dave']],
  ];

  it.each(cases)('%s', async (filter, expected) => {
    const r = await request(t.app).get('/scim/v2/Users').query({ filter }).set('Authorization', scim).expect(200);
    expect({ filter, found: names(r), total: r.body.totalResults }).toEqual({ filter, found: expected, total: expected.length });
  });

  it('meta.lastModified with eq ne gt ge lt le', async () => {
    const at = (op: string) => request(t.app).get('/scim/v2/Users').query({ filter: `meta.lastModified ${op} "${bobModified}"` }).set('Authorization', scim).expect(200);
    expect(names(await at('eq'))).toEqual(['bob']);
    expect(names(await at('ne'))).toEqual(['alice', 'carol', 'dave']);
    expect(names(await at('gt'))).toEqual(['carol', 'dave']);
    expect(names(await at('ge'))).toEqual(['bob', 'carol', 'dave']);
    expect(names(await at('lt'))).toEqual(['alice']);
    expect(names(await at('le'))).toEqual(['alice', 'bob']);
  });

  it.each(['active gt true', 'active co "t"', 'meta.lastModified gt "yesterday"', 'meta.lastModified sw "2026"', 'id co "a"', 'profileUrl eq "x"', 'emails[type eq "work"]'])(
    'refuses %s with invalidFilter',
    async (filter) => {
      expectScimError(await request(t.app).get('/scim/v2/Users').query({ filter }).set('Authorization', scim), 400, 'invalidFilter');
    },
  );

  it('groups filter by displayName, externalId and meta with the same operators', async () => {
    const post = (body: Record<string, unknown>) => request(t.app).post('/scim/v2/Groups').set('Authorization', scim).send({ schemas: [GROUP], ...body }).expect(201);
    await post({ displayName: 'Engineering', externalId: 'g-1' });
    await post({ displayName: 'Sales' });
    await post({ displayName: 'Eng Leads', externalId: 'g-3' });
    const groups = async (filter: string) => (await request(t.app).get('/scim/v2/Groups').query({ filter }).set('Authorization', scim).expect(200)).body.Resources.map((g: { displayName: string }) => g.displayName);
    expect(await groups('displayName sw "eng"')).toEqual(['Engineering', 'Eng Leads']);
    expect(await groups('displayName co "ead"')).toEqual(['Eng Leads']);
    expect(await groups('displayName ew "S"')).toEqual(['Sales', 'Eng Leads']);
    expect(await groups('displayName gt "F"')).toEqual(['Sales']);
    expect(await groups('displayName ne "sales"')).toEqual(['Engineering', 'Eng Leads']);
    expect(await groups('externalId pr')).toEqual(['Engineering', 'Eng Leads']);
    expect(await groups('not (externalId pr) or externalId eq "g-1"')).toEqual(['Engineering', 'Sales']);
    expect(await groups('meta.created pr and displayName lt "Engineering"')).toEqual(['Eng Leads']);
    expectScimError(await request(t.app).get('/scim/v2/Groups').query({ filter: 'userName eq "x"' }).set('Authorization', scim), 400, 'invalidFilter');
  });

  it('POST /Users/.search and /Groups/.search take the query as a body', async () => {
    const users = await request(t.app)
      .post('/scim/v2/Users/.search')
      .set('Authorization', scim)
      .set('Content-Type', 'application/scim+json')
      .send(JSON.stringify({ schemas: [SEARCH], filter: 'userName sw "a" or userName sw "b"', attributes: ['userName'], startIndex: 2, count: 10 }))
      .expect(200);
    expect(users.headers['content-type']).toMatch(/^application\/scim\+json/);
    expect(users.body).toMatchObject({ totalResults: 2, startIndex: 2, itemsPerPage: 1 });
    expect(users.body.Resources).toEqual([{ schemas: [USER], id: expect.any(String), userName: 'bob@y.example', meta: expect.objectContaining({ resourceType: 'User' }) }]);
    const groups = await request(t.app).post('/scim/v2/Groups/.search').set('Authorization', scim).send({ schemas: [SEARCH], filter: 'displayName sw "eng"', excludedAttributes: ['members'] }).expect(200);
    expect(groups.body.Resources.map((g: { displayName: string; members?: unknown }) => [g.displayName, g.members])).toEqual([
      ['Engineering', undefined],
      ['Eng Leads', undefined],
    ]);
    expectScimError(await request(t.app).post('/scim/v2/Users/.search').set('Authorization', scim).send({ filter: 'userName zz "a"' }), 400, 'invalidFilter');
    expectScimError(await request(t.app).post('/scim/v2/Users/.search').set('Authorization', scim).send({ attributes: 'userName' }), 400, 'invalidValue');
  });
});

describe('PATCH paths', () => {
  it('removing active, userName, or a read-only attribute is 400 mutability; an unknown path is 400 invalidPath; nothing changes', async () => {
    const scim = await directory();
    const made = await request(t.app).post('/scim/v2/Users').set('Authorization', scim).send({ schemas: [USER], userName: 'pat@example.com', active: false }).expect(201);
    const id = made.body.id as string;
    const before = (await request(t.app).get(`/scim/v2/Users/${id}`).set('Authorization', scim).expect(200)).body;
    const patch = (...Operations: unknown[]) => request(t.app).patch(`/scim/v2/Users/${id}`).set('Authorization', scim).send({ schemas: [PATCH], Operations });
    for (const op of [
      { op: 'remove', path: 'active' },
      { op: 'Remove', path: `${USER}:active` },
      { op: 'remove', path: 'userName' },
      { op: 'replace', path: 'groups', value: [] },
      { op: 'add', path: 'groups[value eq "x"].display', value: 'x' },
      { op: 'replace', path: 'id', value: '00000000-0000-4000-8000-000000000000' },
      { op: 'replace', path: 'meta.created', value: '2020-01-01T00:00:00Z' },
      { op: 'replace', value: { id: '00000000-0000-4000-8000-000000000000' } },
    ]) {
      expectScimError(await patch(op), 400, 'mutability');
    }
    for (const op of [
      { op: 'replace', path: 'favoriteColor', value: 'x' },
      { op: 'add', path: 'name.nickname', value: 'x' },
      { op: 'replace', path: 'emails[type eq "work"].colour', value: 'x' },
      { op: 'replace', path: 'active[value eq true]', value: true },
      { op: 'replace', value: { favoriteColor: 'x' } },
      { op: 'replace', value: { 'name.nickname': 'x' } },
      { op: 'replace', path: 'urn:example:params:scim:schemas:extension:custom:2.0:User:shoeSize', value: 42 },
      { op: 'replace', path: `${ENTERPRISE}:shoeSize`, value: 42 },
    ]) {
      expectScimError(await patch(op), 400, 'invalidPath');
    }
    // A refusal anywhere in the request refuses all of it.
    expectScimError(await patch({ op: 'replace', path: 'active', value: true }, { op: 'remove', path: 'active' }), 400, 'mutability');
    expect((await request(t.app).get(`/scim/v2/Users/${id}`).set('Authorization', scim).expect(200)).body).toEqual(before);

    // What directories send and the service accepts without keeping still answers 200, unchanged.
    const kept = await patch(
      { op: 'Add', path: 'addresses[type eq "work"].locality', value: 'Berlin' },
      { op: 'Replace', path: `${ENTERPRISE}:department`, value: 'Sales' },
      { op: 'Replace', value: { id, profileUrl: 'https://example.com/p', [`${ENTERPRISE}:manager`]: 'x' } },
    ).expect(200);
    expect(kept.body).toEqual(before);
    expect((await patch({ op: 'replace', path: 'active', value: true }).expect(200)).body.active).toBe(true);
  });

  it('a group: removing displayName is 400 mutability, an unknown path 400 invalidPath, a member\'s display read-only', async () => {
    const scim = await directory();
    const u = await request(t.app).post('/scim/v2/Users').set('Authorization', scim).send({ userName: 'gm@example.com' }).expect(201);
    const g = await request(t.app).post('/scim/v2/Groups').set('Authorization', scim).send({ displayName: 'Ops', members: [{ value: u.body.id }] }).expect(201);
    const patch = (op: unknown) => request(t.app).patch(`/scim/v2/Groups/${g.body.id}`).set('Authorization', scim).send({ schemas: [PATCH], Operations: [op] });
    expectScimError(await patch({ op: 'remove', path: 'displayName' }), 400, 'mutability');
    expectScimError(await patch({ op: 'replace', path: `members[value eq "${u.body.id}"].display`, value: 'x' }), 400, 'mutability');
    expectScimError(await patch({ op: 'replace', path: 'owner', value: 'x' }), 400, 'invalidPath');
    expectScimError(await patch({ op: 'replace', path: `${ENTERPRISE}:department`, value: 'x' }), 400, 'invalidPath');
    expect((await request(t.app).get(`/scim/v2/Groups/${g.body.id}`).set('Authorization', scim).expect(200)).body).toEqual(g.body);
  });
});

describe('attributes kept without a column of their own', () => {
  it('are written, shown, patched, cleared by a PUT that leaves them out, and named in member.updated', async () => {
    const scim = await directory();
    const body = { schemas: [USER], userName: `${unique('kept')}@example.com`, title: 'Mathematician', locale: 'en-GB', timezone: 'Europe/London', nickName: 'Alan', userType: 'Employee', preferredLanguage: 'en' };
    const made = await request(t.app).post('/scim/v2/Users').set('Authorization', scim).send(body).expect(201);
    expect(made.body).toMatchObject({ title: 'Mathematician', locale: 'en-GB', timezone: 'Europe/London', nickName: 'Alan', userType: 'Employee', preferredLanguage: 'en' });
    const id = made.body.id as string;
    const patch = (...Operations: unknown[]) => request(t.app).patch(`/scim/v2/Users/${id}`).set('Authorization', scim).send({ schemas: [PATCH], Operations });
    const patched = await patch({ op: 'Replace', path: 'title', value: 'Professor' }, { op: 'remove', path: 'nickName' }, { op: 'Add', value: { TimeZone: 'Europe/Berlin' } }).expect(200);
    expect(patched.body).toMatchObject({ title: 'Professor', timezone: 'Europe/Berlin', locale: 'en-GB' });
    expect(patched.body.nickName).toBeUndefined();
    // Names in a path-less value are case-insensitive, for a column's attribute too.
    expect((await patch({ op: 'replace', value: { DisplayName: 'A. Turing' } }).expect(200)).body.displayName).toBe('A. Turing');
    expect((await request(t.app).get(`/scim/v2/Users/${id}`).set('Authorization', scim).expect(200)).body).toMatchObject({ title: 'Professor', timezone: 'Europe/Berlin' });
    // Projection applies to them as to any attribute.
    const projected = await request(t.app).get(`/scim/v2/Users/${id}?attributes=title`).set('Authorization', scim).expect(200);
    expect(Object.keys(projected.body).sort()).toEqual(['id', 'meta', 'schemas', 'title']);
    // A PUT is the whole user: what it leaves out is cleared.
    const put = await request(t.app).put(`/scim/v2/Users/${id}`).set('Authorization', scim).send({ schemas: [USER], userName: body.userName, title: 'Emeritus' }).expect(200);
    expect(put.body.title).toBe('Emeritus');
    for (const gone of ['locale', 'timezone', 'userType', 'preferredLanguage']) expect(put.body[gone]).toBeUndefined();
    // Too long, or not a string: 400 invalidValue, nothing changed.
    expectScimError(await patch({ op: 'replace', path: 'title', value: 'x'.repeat(301) }), 400, 'invalidValue');
    expectScimError(await patch({ op: 'replace', path: 'locale', value: 42 }), 400, 'invalidValue');
    expect((await request(t.app).get(`/scim/v2/Users/${id}`).set('Authorization', scim).expect(200)).body.title).toBe('Emeritus');
    // Filterable like any text: compared case-insensitively, present or not, never another user's.
    const list = async (filter: string) =>
      (await request(t.app).get('/scim/v2/Users').query({ filter }).set('Authorization', scim).expect(200)).body.Resources.map((r: { id: string }) => r.id) as string[];
    expect(await list('title eq "emeritus"')).toEqual([id]);
    expect(await list(`title sw "Emer" and userName eq "${body.userName}"`)).toEqual([id]);
    expect(await list(`title pr and userName eq "${body.userName}"`)).toEqual([id]);
    expect(await list(`not (locale pr) and userName eq "${body.userName}"`)).toEqual([id]);
    expect(await list('title eq "Professor"')).toEqual([]);
    expect(await list(`title ew "'); drop table directory_users; --"`)).toEqual([]);
    expectScimError(await request(t.app).get('/scim/v2/Users').query({ filter: 'title gt true' }).set('Authorization', scim), 400, 'invalidFilter');
    // The update events name what changed, by attribute.
    const events = await request(t.app).get(`/api/setup/events?action=member.updated&limit=10`).set('Authorization', `Bearer ${adminToken()}`).expect(200);
    const changed = events.body.events.filter((e: { target: { id: string } }) => e.target.id === id).map((e: { data: { changed: string[] } }) => e.data.changed);
    expect(changed).toContainEqual(expect.arrayContaining(['title', 'timezone', 'nickName']));
    expect(changed).toContainEqual(expect.arrayContaining(['title', 'locale', 'timezone', 'userType', 'preferredLanguage']));
  });
});
