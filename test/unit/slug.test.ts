// Imported explicitly (not ambient) so `npm run build`, whose tsconfig has no jest types, still compiles src/.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { baseSlugFromName, MAX_GENERATED_SLUG_LENGTH, slugCandidate, slugCandidates } from '../../src/domain/slug';

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;

describe('baseSlugFromName', () => {
  it('normalizes like tenant claims', () => {
    expect(baseSlugFromName('Acme Corporation')).toBe('acme-corporation');
    expect(baseSlugFromName('  Ärger & Söhne GmbH!  ')).toBe('arger-sohne-gmbh');
    expect(baseSlugFromName('ACME__Corp--Ltd.')).toBe('acme-corp-ltd');
  });

  it('cuts to 63 characters without a trailing hyphen', () => {
    const name = `${'a'.repeat(62)} bcd`;
    const slug = baseSlugFromName(name);
    expect(slug).toBe('a'.repeat(62));
    expect(baseSlugFromName('x'.repeat(300))).toHaveLength(MAX_GENERATED_SLUG_LENGTH);
  });

  it('gives a name with nothing usable an org-<random> slug', () => {
    expect(baseSlugFromName('🚀🚀🚀', () => 'deadbeef')).toBe('org-deadbeef');
    expect(baseSlugFromName('---', () => 'cafe0001')).toBe('org-cafe0001');
    expect(baseSlugFromName('日本語')).toMatch(/^org-[0-9a-f]{8}$/);
  });

  it('always yields a valid slug of at most 63 characters (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400, unit: 'grapheme' }), (name) => {
        const slug = baseSlugFromName(name);
        expect(slug.length).toBeGreaterThan(0);
        expect(slug.length).toBeLessThanOrEqual(MAX_GENERATED_SLUG_LENGTH);
        expect(slug).toMatch(SLUG);
      }),
    );
  });
});

describe('slugCandidate', () => {
  it('is the base first, then -2, -3…', () => {
    expect(slugCandidates('acme', 1, 4)).toEqual(['acme', 'acme-2', 'acme-3', 'acme-4']);
    expect(slugCandidate('acme', 12)).toBe('acme-12');
  });

  it('cuts the base so a suffixed slug stays within 63 characters', () => {
    const base = 'b'.repeat(63);
    expect(slugCandidate(base, 2)).toBe(`${'b'.repeat(61)}-2`);
    expect(slugCandidate(base, 100)).toBe(`${'b'.repeat(59)}-100`);
    // A hyphen left at the cut is dropped rather than doubled.
    expect(slugCandidate(`${'c'.repeat(60)}-dd`, 2)).toBe(`${'c'.repeat(60)}-2`);
  });

  it('refuses a candidate number below 1', () => {
    expect(() => slugCandidate('acme', 0)).toThrow(RangeError);
  });

  it('keeps every candidate valid and short (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), fc.integer({ min: 1, max: 5000 }), (name, n) => {
        const base = baseSlugFromName(name, () => '0badf00d');
        const all = slugCandidates(base, n, 3);
        for (const s of all) {
          expect(s.length).toBeLessThanOrEqual(MAX_GENERATED_SLUG_LENGTH);
          expect(s).toMatch(SLUG);
        }
      }),
    );
  });
});
