/**
 * `npm run test:contract`: the contract suite (test/contract/contract-client.test.ts) alone. With
 * CONTRACT_URL it runs against that server through the API only and needs no database here;
 * without, against an app it starts on a fresh test database like `npm test`
 * (docs/architecture.md#contract-tests-against-a-running-server).
 */
const base = require('./jest.config.js');
const integration = base.projects.find((p) => p.displayName === 'integration');

/** @type {import('jest').Config} */
module.exports = {
  testTimeout: 120000,
  projects: [
    {
      ...integration,
      displayName: 'contract',
      testMatch: ['<rootDir>/test/contract/contract-client.test.ts'],
      ...(process.env.CONTRACT_URL ? { globalSetup: undefined, globalTeardown: undefined } : {}),
    },
  ],
};
