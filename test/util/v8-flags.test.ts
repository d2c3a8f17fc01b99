import { execFileSync } from 'node:child_process';
import { scanV8Flags } from '../../src/util/v8-flags';

const WASM = ['--wasm-tiering-budget=2147483647'];

test.each([
  ['11.3.244.8-node.38', WASM], // Node 20
  ['12.4.254.21-node.33', WASM], // Node 22 (Lambda's runtime)
  ['13.6.233.10-node.28', WASM],
  ['14.1.146.11-node.14', WASM],
  ['10.2.154.26-node.29', []],
  ['15.0.1', []],
  ['', []],
  ['v8', []],
])('scanV8Flags(%p) is %p', (version, expected) => {
  expect(scanV8Flags(version)).toEqual(expected);
});

test("this Node's V8 has the flags and accepts them", () => {
  const flags = scanV8Flags(process.versions.v8);
  const options = execFileSync(process.execPath, ['--v8-options'], {
    maxBuffer: 16 * 1024 * 1024,
  }).toString();
  for (const flag of flags) expect(options).toContain(`  ${flag.split('=')[0] as string} (`);
  // An unknown V8 flag on the command line ends the process with an error.
  const r = execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write("ok")'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  expect(r.toString()).toBe('ok');
});
