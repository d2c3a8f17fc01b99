/**
 * test/support/setup.ts closes the shared parser after a test file: its `afterAll` is registered
 * before this file's, so by the time this file's runs a new shared parser is made.
 */
import type { HclParser } from '../../src/hcl';
import { sharedHclParser } from '../../src/scan';

let used: HclParser | undefined;

test('parses with the shared parser', async () => {
  used = sharedHclParser();
  const r = await used.parse('main.tf', Buffer.from('locals {\n  x = 1\n}\n'));
  expect(r.ok).toBe(true);
});

afterAll(async () => {
  const next = sharedHclParser();
  const closed = next !== used;
  await next.close();
  if (!closed) throw new Error('test/support/setup.ts did not close the shared parser');
});
