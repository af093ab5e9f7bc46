/** The flag parsers of the `tenant` commands. */
import { InvalidArgumentError } from 'commander';
import type { TenantSettings } from '../../generated/types.gen';

export const SLUG = /^[a-z0-9-]+$/;

// Flag parsers: a bad value is a usage error (exit 2) naming the flag and what it wants.

export function parseName(v: string): string {
  const name = v.trim();
  if (name.length < 1 || name.length > 255) throw new InvalidArgumentError('--name must be 1-255 characters.');
  return name;
}

export function parseSlug(flag: string) {
  return (v: string): string => {
    if (!SLUG.test(v) || v.length > 255) throw new InvalidArgumentError(`${flag} must be 1-255 lowercase letters, digits and hyphens.`);
    return v;
  };
}

export function parseQuery(v: string): string {
  if (v.length < 1 || v.length > 255) throw new InvalidArgumentError('--query must be 1-255 characters.');
  return v;
}

export function parseLimit(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 1000) throw new InvalidArgumentError('--limit must be an integer from 1 to 1000.');
  return Number(v);
}

export function parseBool(v: string): boolean {
  const lower = v.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(lower)) return true;
  if (['false', '0', 'no'].includes(lower)) return false;
  throw new InvalidArgumentError('expected true or false.');
}

export function parseIssuer(v: string): string {
  const s = v.trim();
  if (s === '' || s.length > 2048) throw new InvalidArgumentError('expected an issuer URL of 1 to 2048 characters.');
  return s;
}

export function parseOrganizationId(v: string): string {
  if (v.trim() === '' || v.length > 255) throw new InvalidArgumentError('--organization-id must be 1 to 255 characters.');
  return v;
}

export function parseSettings(v: string): TenantSettings {
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch (err) {
    throw new InvalidArgumentError(`--settings is not valid JSON (${(err as Error).message}).`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError('--settings must be a JSON object, e.g. \'{"billing_plan":"pro"}\'.');
  return parsed as TenantSettings;
}
