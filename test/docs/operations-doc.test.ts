/**
 * docs/operations.md says what the service does: its rate-limit table names every counter the
 * contract declares (with its limit), and its page on several instances describes the per-instance
 * memory of decision facts instead of claiming nothing is kept.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readContractOperations } from '../../src/http/contract';

const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
const section = (title: string) => {
  const start = doc.indexOf(`\n## ${title}\n`);
  expect(start).toBeGreaterThan(-1);
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end === -1 ? undefined : end);
};

it("the rate-limit table has a row for every counter of the contract, stating the counter's limit", () => {
  const rows = section('Rate limits')
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| Requests') && !l.startsWith('|---'));
  const counters = new Map<string, { limit: number; window: string }>();
  for (const o of readContractOperations()) if (o.rateLimit) counters.set(o.rateLimit.counter, o.rateLimit);
  for (const [counter, { limit, window }] of counters) {
    const row = rows.find((r) => r.trimEnd().endsWith(`| \`${counter}\` |`));
    expect({ counter, row: row ?? null }).toEqual({ counter, row: expect.any(String) });
    expect({ counter, limit: row!.replace(/(\d) (\d{3})/g, '$1$2') }).toEqual({ counter, limit: expect.stringContaining(`${limit} per ${window}`) });
  }
});

it('several instances: the decision memory each keeps is described, dropped by committed changes', () => {
  const text = section('Running several instances');
  expect(text).not.toMatch(/nothing about\s+tenants or memberships is cached/);
  // The link as operations.md writes it, relative to docs/.
  expect(text).toContain(`(${path.relative('docs', 'docs/architecture.md')}#decisions-from-memory)`);
  expect(text).toMatch(/dropped by\s+committed changes/);
});
