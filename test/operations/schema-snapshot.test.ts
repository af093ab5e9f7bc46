/**
 * Frozen migrations: an empty database migrated to the latest version has exactly the schema in
 * test/operations/schema-snapshot.json (tables, columns, constraints, indexes, policies, grants, functions,
 * roles). A change to a released migration (or to anything it imports) shows here as a diff.
 *
 * A NEW migration changes the schema on purpose: regenerate the snapshot with
 *   UPDATE_SCHEMA_SNAPSHOT=1 npm test -- test/operations/schema-snapshot.test.ts
 * and commit test/operations/schema-snapshot.json with the migration, after reading its diff.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createFreshDatabase } from '../helpers/fresh-database';
import { readSchemaSnapshot } from '../helpers/schema-snapshot';

const SNAPSHOT = path.join(__dirname, 'schema-snapshot.json');

it('migrating an empty database gives the committed schema', async () => {
  const fresh = await createFreshDatabase('tenant_service_schema');
  try {
    const actual = JSON.parse(JSON.stringify(await readSchemaSnapshot(fresh.url))) as Record<string, unknown>;
    if (process.env.UPDATE_SCHEMA_SNAPSHOT === '1') {
      fs.writeFileSync(SNAPSHOT, `${JSON.stringify(actual, null, 2)}\n`);
      return;
    }
    if (!fs.existsSync(SNAPSHOT)) throw new Error(`${SNAPSHOT} is missing: run UPDATE_SCHEMA_SNAPSHOT=1 npm test -- test/operations/schema-snapshot.test.ts`);
    const committed = JSON.parse(fs.readFileSync(SNAPSHOT, 'utf8')) as Record<string, unknown>;
    // Section by section, so a failure names what changed.
    for (const section of new Set([...Object.keys(committed), ...Object.keys(actual)])) {
      expect({ section, value: actual[section] }).toEqual({ section, value: committed[section] });
    }
  } finally {
    await fresh.drop();
  }
}, 120_000);
