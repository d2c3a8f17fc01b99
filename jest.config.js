const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

// Tests run the CLI bundle, which keeps caches in the user's cache directory (the V8 code cache,
// the extraction cache): one temporary cache home per test run instead, removed at its end
// (test/support/cache-home-teardown.js). Workers inherit this process's environment.
if (process.env.TFGUARD_TEST_CACHE_HOME === undefined) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'tfguard-test-cache-'));
  process.env.TFGUARD_TEST_CACHE_HOME = home;
  process.env.XDG_CACHE_HOME = home;
  delete process.env.TFGUARD_CACHE_DIR;
}

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Closes the shared HCL parser pool after every test file (test/support/setup.ts).
  setupFilesAfterEnv: ['<rootDir>/test/support/setup.ts'],
  globalTeardown: '<rootDir>/test/support/cache-home-teardown.js',
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
  },
  testTimeout: 60000,
  maxWorkers: 2,
};
