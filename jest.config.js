/**
 * Two projects: `unit` (test/unit: pure logic, no PostgreSQL or Redis, no global setup) and
 * `integration` (every other suite, on a fresh database made by global-setup). `npm test` runs
 * both; `npm run test:unit` only the first. A project's global setup runs only when one of its
 * tests is selected, so `npx jest test/unit/x.test.ts` needs no database either.
 */
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // generated/ (hey-api) imports its siblings as './x.js'; under ts-jest they are .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

/** @type {import('jest').Config} */
module.exports = {
  // A bound against a hang, not a timing check (docs/architecture.md#waiting-in-tests): generous,
  // since CI shares two cores and a test's requests can take ten times their idle time.
  testTimeout: 120000,
  maxWorkers: 2,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/src/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      // One folder per area (docs/architecture.md#tests); test/unit belongs to the project above.
      testMatch: ['<rootDir>/test/{api,cli,console,contract,docs,isolation,operations,reliability}/**/*.test.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
      setupFilesAfterEnv: ['<rootDir>/test/setup/contract.ts'],
    },
  ],
};
