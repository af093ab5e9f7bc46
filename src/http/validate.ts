/**
 * Stage: the request validated once against its matched operation, with the validators
 * openapi-backend compiles from the contract at boot (ajv + formats, types coerced in place).
 * openapi-backend is used for nothing else: routing is ./router.ts.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import OpenAPIBackend, { type Document } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { ApiError } from '../errors';
import { loadOpenApiDocument } from '../openapi-document';
import { stateOf } from './request-state';

/** The validated, coerced parts of a request (what a handler's input is built from). */
export interface ValidatedInput {
  readonly path: Record<string, unknown>;
  readonly query: Record<string, unknown>;
  readonly body: unknown;
}

interface Parameters {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  requestBody?: unknown;
}
type CompiledValidator = ((data: Parameters) => boolean) & { errors?: ErrorObject[] | null };

/** Compiles the contract's request validators (strict, formats included). */
export async function createValidator(): Promise<(operationId: string) => CompiledValidator[]> {
  const api = new OpenAPIBackend({
    definition: loadOpenApiDocument() as unknown as Document,
    strict: true,
    // Startup: no re-validation of the document (redocly lint and the contract tests check it)
    // and no response validators (only request validators are used): about 6 s of every start
    // on the 2-core machine.
    quick: true,
    validate: true,
    coerceTypes: true,
    ignoreTrailingSlashes: false,
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
  });
  await api.init();
  // Compiled on an operation's first request, then cached: compiling all of them at boot took
  // ~2 s of every start on the 2-core machine.
  const byOperation = new Map<string, CompiledValidator[]>();
  return (operationId) => {
    let validators = byOperation.get(operationId);
    if (!validators) {
      validators = (api.validator.getRequestValidatorsForOperation(operationId) ?? []) as unknown as CompiledValidator[];
      byOperation.set(operationId, validators);
    }
    return validators;
  };
}

export function validateStage(validatorsFor: (operationId: string) => CompiledValidator[]): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    const parameters: Parameters = { path: { ...state.params }, query: { ...(req.query as Record<string, unknown>) }, header: req.headers };
    if (req.body !== undefined || req.headers['content-type'] === 'application/json') parameters.requestBody = req.body;
    const errors: ErrorObject[] = [];
    for (const validate of validatorsFor(state.operation!.operationId)) {
      if (!validate(parameters) && validate.errors) errors.push(...validate.errors);
    }
    if (errors.length) return next(new ApiError('validation', describeValidationErrors(errors)));
    state.input = { path: parameters.path, query: parameters.query, body: parameters.requestBody };
    next();
  };
}

function describeValidationErrors(errors: ErrorObject[]): string {
  return errors
    .slice(0, 5)
    .map((e) => {
      const where = (e.instancePath || '')
        .replace(/^\/requestBody/, 'body')
        .replace(/^\/query/, 'query')
        .replace(/^\/params/, 'path')
        .replace(/^\/path/, 'path')
        .replace(/^\/header/, 'header')
        .replace(/\//g, '.')
        .replace(/^\./, '');
      const params = e.params as Record<string, unknown>;
      let msg = e.message ?? 'is invalid';
      if (e.keyword === 'additionalProperties') msg = `has unknown field '${String(params.additionalProperty)}'`;
      if (e.keyword === 'required') msg = `is missing required field '${String(params.missingProperty)}'`;
      return `${where || 'request'} ${msg}`;
    })
    .join('; ');
}
