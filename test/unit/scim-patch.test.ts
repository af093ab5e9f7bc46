/**
 * src/domain/scim/patch.ts: a PATCH can never reach an object's prototype machinery, whether
 * through a path, a dotted key of a path-less value, or a key nested in a value; a refusal is a
 * SCIM 400 and pollutes nothing.
 */
import { USER_ACCEPTED, USER_ATTRIBUTES } from '../../src/domain/scim/attributes';
import { applyPatch, readPatch, type PatchSchema } from '../../src/domain/scim/patch';

const USER: PatchSchema = { attributes: USER_ATTRIBUTES, accepted: USER_ACCEPTED, extensions: {} };

const patch = (op: Record<string, unknown>) => ({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [op] });

afterEach(() => {
  for (const k of ['polluted', 'x']) delete (Object.prototype as Record<string, unknown>)[k];
});

it.each([
  ['a dotted key of a path-less value', { op: 'Replace', value: JSON.parse('{"__proto__.polluted": true}') }, 'invalidValue'],
  ['a key nested in a value', { op: 'replace', value: JSON.parse('{"name": {"__proto__": {"polluted": true}}}') }, 'invalidValue'],
  ['constructor.prototype in a dotted key', { op: 'add', value: { 'constructor.prototype.polluted': true } }, 'invalidValue'],
  ['a path through constructor', { op: 'add', path: 'constructor.polluted', value: true }, 'invalidPath'],
  ['a path naming prototype', { op: 'replace', path: 'name.prototype', value: { polluted: true } }, 'invalidPath'],
])('refuses %s with a SCIM 400, and nothing is polluted', (_what, op, scimType) => {
  let err: unknown;
  try {
    applyPatch({ userName: 'a@example.test', name: { givenName: 'A' } }, readPatch(patch(op), USER));
  } catch (e) {
    err = e;
  }
  expect(err).toMatchObject({ scimType });
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

it('still applies the dotted keys and paths Entra ID sends', () => {
  const out = applyPatch({ userName: 'a@example.test', name: { givenName: 'A' } }, readPatch(patch({ op: 'Replace', value: { 'name.familyName': 'B', displayName: 'A B' } }), USER));
  expect(out).toMatchObject({ name: { familyName: 'B' }, displayName: 'A B' });
});
