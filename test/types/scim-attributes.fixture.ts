/**
 * Type-level fixture, checked by `npm run typecheck` (never run): each `@ts-expect-error` below
 * proves that tsc refuses a SCIM attribute table that forgets a consumer
 * (docs/architecture-operations.md#adding-a-scim-attribute). If a mistake ever compiles, its directive is
 * unused and the typecheck fails.
 */

import { USER_ATTRIBUTES, type EveryColumnWritten, type UserAttributeTable } from '../../src/domain/scim/attributes';
import type { DirectoryUserFields } from '../../src/context/records';

// The real table compiles.
export const ok: UserAttributeTable = USER_ATTRIBUTES;
export const written: EveryColumnWritten<typeof USER_ATTRIBUTES, DirectoryUserFields> = true;

// 1. An attribute the contract's ScimUser shows, without an entry.
const { displayName: _dropped, ...missingOne } = USER_ATTRIBUTES;
// @ts-expect-error displayName is missing
export const missing: UserAttributeTable = missingOne;

// 2. An entry the contract does not show.
// @ts-expect-error shoeSize is not an attribute of ScimUser
export const extra: UserAttributeTable = { ...USER_ATTRIBUTES, shoeSize: USER_ATTRIBUTES.displayName };

// 3. An entry shown with another type than the contract's.
// @ts-expect-error active is a boolean in ScimUser
export const mistyped: UserAttributeTable = { ...USER_ATTRIBUTES, active: { ...USER_ATTRIBUTES.active, get: () => 'yes' } };

// 4. A kept column no entry writes (the emails' columns, once their entry is gone).
const { emails: _emails, ..._unwritten } = USER_ATTRIBUTES;
// @ts-expect-error emails and email_keys are written by no entry
export const columns: EveryColumnWritten<typeof _unwritten, DirectoryUserFields> = true;
