/**
 * The contract compiles whole. Every suite checks each response it receives against openapi.yaml
 * (test/setup/contract.ts), compiling the validators of the operations it meets when it first
 * meets them; this suite compiles all of them at once, as a strict openapi-backend does: the
 * definition is a valid OpenAPI document and every operation's request, response and
 * response-header schemas compile, including those of statuses no suite provokes.
 */
import addFormats from 'ajv-formats';
import OpenAPIBackend, { type Document } from 'openapi-backend';
import { loadOpenApiDocument } from '../../src/openapi-document';

jest.setTimeout(120_000);

it('the definition validates and every validator compiles', async () => {
  const warn = jest.spyOn(console, 'warn');
  const backend = new OpenAPIBackend({
    definition: loadOpenApiDocument() as unknown as Document,
    quick: false,
    strict: true,
    validate: true,
    customizeAjv: (ajv) => {
      addFormats(ajv);
      return ajv;
    },
  });
  await expect(backend.init()).resolves.toBe(backend);
  expect(warn).not.toHaveBeenCalled();
  const operations = backend.getOperations();
  expect(operations.length).toBeGreaterThan(50);
  for (const op of operations) {
    expect([op.operationId, backend.validator.getRequestValidatorsForOperation(op.operationId!).length > 0]).toEqual([op.operationId, true]);
  }
});
