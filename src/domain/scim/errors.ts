/**
 * A refusal of a SCIM request with the `scimType` RFC 7644 names for it. Rendered as a
 * SCIM error by src/http/scim-error.ts, like every failure of a SCIM operation.
 */
import { ApiError, type ErrorKind } from '../../errors';

export type ScimType = 'uniqueness' | 'invalidFilter' | 'invalidPath' | 'invalidValue' | 'invalidSyntax' | 'noTarget' | 'mutability' | 'tooMany';

export class ScimError extends ApiError {
  constructor(
    kind: ErrorKind,
    detail: string,
    readonly scimType: ScimType | null = null,
  ) {
    super(kind, detail);
  }
}

/** 400 with a scimType. */
export const invalid = (scimType: ScimType, detail: string): ScimError => new ScimError('badRequest', detail, scimType);
