/**
 * openapi-backend in its two roles, from one instance built at boot: its router matches a
 * request to an operation of openapi.yaml, and its validators (ajv + formats, types coerced in
 * place) check the request against that operation.
 */
import OpenAPIBackend, { OpenAPIRouter, type Document, type Operation } from 'openapi-backend';
import addFormats from 'ajv-formats';
import type { ErrorObject } from 'ajv';
import { loadOpenApiDocument } from '../openapi-document';

/** A request as the validators read it. */
export interface RequestParameters {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  header: Record<string, unknown>;
  requestBody?: unknown;
}
export type CompiledValidator = ((data: RequestParameters) => boolean) & { errors?: ErrorObject[] | null };

/**
 * openapi-backend's router with its operation list built once: `getOperations()` rebuilds the
 * list from the document on every call, i.e. on every request it matches.
 */
export class ContractRouter extends OpenAPIRouter {
  private operations: Operation[] | undefined;

  override getOperations(): Operation[] {
    this.operations ??= super.getOperations();
    return this.operations;
  }
}

export interface ContractApi {
  readonly router: ContractRouter;
  /** The request validators of an operation, compiled on its first request. */
  validatorsFor(operationId: string): CompiledValidator[];
}

/** Builds the router and the validators from openapi.yaml (strict, formats included). */
export async function createContractApi(): Promise<ContractApi> {
  const api = new OpenAPIBackend({
    definition: loadOpenApiDocument() as unknown as Document,
    strict: true,
    // Startup: no re-validation of the document (redocly lint and the contract tests check it)
    // and no response validators (only request validators are used): about 6 s of every start
    // on a 2-core machine.
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
  const router = new ContractRouter({ definition: api.definition, apiRoot: api.apiRoot, ignoreTrailingSlashes: false });
  // Compiled on an operation's first request, then cached: compiling all of them at boot took
  // about 2 s of every start on a 2-core machine.
  const byOperation = new Map<string, CompiledValidator[]>();
  return {
    router,
    validatorsFor(operationId) {
      let validators = byOperation.get(operationId);
      if (!validators) {
        validators = (api.validator.getRequestValidatorsForOperation(operationId) ?? []) as unknown as CompiledValidator[];
        byOperation.set(operationId, validators);
      }
      return validators;
    },
  };
}
