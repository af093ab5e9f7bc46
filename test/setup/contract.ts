/**
 * Every response any supertest request receives is validated against openapi.yaml: the status
 * must be documented for the operation, the body must match its schema, and documented integer
 * headers must be integers. A mismatch fails the test that made the request.
 */
import { Test } from 'supertest';
import { contractProblem, initContract } from '../helpers/contract';

beforeAll(() => initContract());

type AssertFn = (this: Test, resError: unknown, res: unknown, fn: (err: unknown, res: unknown) => void) => void;
const proto = Test.prototype as unknown as { assert: AssertFn; method: string; url: string };
const original = proto.assert;
proto.assert = function (this: Test & { method: string; url: string }, resError, res, fn) {
  if (res && typeof res === 'object' && 'status' in res) {
    let problem: string | null;
    try {
      problem = contractProblem(this.method, this.url, res as never);
    } catch (err) {
      problem = `contract check failed: ${String(err)}`;
    }
    if (problem) return fn.call(this, new Error(problem), res);
  }
  return original.call(this, resError, res, fn);
};
