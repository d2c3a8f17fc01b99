/**
 * Jest `setupFilesAfterEnv`: after each test file, stop the shared HCL parser pool
 * (`closeSharedParser`) if the file loaded `src/scan`, so a test file need not close it by hand.
 *
 * `require.cache` in jest is a read-only view of the test file's module registry: looking the module
 * up there (rather than importing it) loads nothing into files that never use it, and so cannot
 * bypass a `jest.mock` made later by the test file.
 */
import type * as Scan from '../../src/scan';

const SCAN = require.resolve('../../src/scan');

afterAll(async () => {
  const scan = require.cache[SCAN]?.exports as typeof Scan | undefined;
  if (scan !== undefined) await scan.closeSharedParser();
});

// The CLI keeps an extraction cache in the user's cache directory by default: tests do not write
// there (test/cli/extract-cache.test.ts turns it on, in a temporary directory).
process.env.TFGUARD_EXTRACT_CACHE ??= 'off';
