/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Closes the shared HCL parser pool after every test file (test/support/setup.ts).
  setupFilesAfterEnv: ['<rootDir>/test/support/setup.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  },
  testTimeout: 60000,
  maxWorkers: 2,
};
