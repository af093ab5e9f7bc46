/**
 * Stage: the request validated once against its matched operation, with openapi-backend's
 * validators (./openapi.ts).
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ErrorObject } from 'ajv';
import { ApiError } from '../errors';
import { answersGateway, decisionQuery } from './decision';
import type { CompiledValidator, RequestParameters } from './openapi';
import { stateOf } from './request-state';

export function validateStage(validatorsFor: (operationId: string) => CompiledValidator[]): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const state = stateOf(req);
    let query: Record<string, unknown>;
    try {
      // An operation answering gateways reads its own query: only its parameters before `path=` (./decision.ts).
      query = answersGateway(state.operation) ? decisionQuery(req.originalUrl) : { ...(req.query as Record<string, unknown>) };
    } catch (err) {
      return next(err);
    }
    for (const name of state.operation!.arrayQueryParams) if (typeof query[name] === 'string') query[name] = [query[name]];
    const parameters: RequestParameters = { path: { ...state.params }, query, header: req.headers };
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
