/**
 * A domain verified on one instance changes, on every other instance, which tenant an email
 * resolves to (docs/domains.md#resolution), although those instances remembered the facts of
 * the tenant the slug rule chose: a verified row gained or lost notifies every instance to
 * forget all remembered facts (docs/architecture.md "Decisions from memory").
 */
import request from 'supertest';
import { startTestApp, type TestApp } from '../../helpers/app';
import { adminToken, closeOwnerConnection, createTenant, createUser, tokenFor, unique } from '../../helpers/factories';

let one: TestApp;
let two: TestApp;
beforeAll(async () => {
  one = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
  two = await startTestApp({ SERVICE_MULTI_TENANT_MODE: 'true' });
});
afterAll(async () => {
  await one.close();
  await two.close();
  await closeOwnerConnection();
});

/** Asks until `done` holds of the answer (the other instance's notification arrives asynchronously). */
async function until(ask: () => Promise<request.Response>, done: (r: request.Response) => boolean): Promise<request.Response> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await ask();
    if (done(r) || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it('the slug tenant remembered on one instance gives way to the verified owner once another instance verifies the domain, and back when it is removed', async () => {
  const label = unique('mem');
  const domain = `${label}.example`;
  const look = await createTenant({ slug: label });
  const owner = await createTenant();
  const person = await createUser(look.id, { email: `pat@${domain}` });
  await createUser(owner.id, { subject: person.subject, email: `pat@${domain}` });
  const auth = `Bearer ${tokenFor({ sub: person.subject, claims: { email: `pat@${domain}`, email_verified: true } })}`;
  const current = () => request(one.app).get('/api/tenant').set('Authorization', auth);

  // Remembered: the second answer comes from memory.
  expect((await current().expect(200)).body.tenant.slug).toBe(label);
  expect((await current().expect(200)).body.tenant.slug).toBe(label);

  await request(two.app).post(`/api/setup/tenant/${owner.id}/domains`).set('Authorization', `Bearer ${adminToken()}`).send({ domain, verified: true }).expect(201);
  const moved = await until(current, (r) => r.status === 200 && r.body.tenant.slug === owner.slug);
  expect(moved.body.tenant.slug).toBe(owner.slug);

  // An owner's admin removes it on the other instance: the slug rule applies again.
  const ownerAdmin = await createUser(owner.id, { role: 'admin' });
  await request(two.app)
    .delete(`/api/tenant/domains/${domain}`)
    .set('Authorization', `Bearer ${tokenFor({ sub: ownerAdmin.subject })}`)
    .set('X-Tenant', owner.slug)
    .expect(204);
  const back = await until(current, (r) => r.status === 200 && r.body.tenant.slug === label);
  expect(back.body.tenant.slug).toBe(label);
});
