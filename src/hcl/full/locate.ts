/**
 * Where @cdktf/hcl2json is. It is loaded by path in worker threads (pool.ts) and reads
 * `main.wasm.gz` beside its own files, so it is never bundled into a JavaScript file.
 *
 * - From source (tsx, ts-jest) and in the Lambda bundles: the installed package
 *   (`require.resolve`).
 * - In the committed CLI bundle (dist-cli/tfguard.cjs, scripts/build-cli.ts): a copy beside the
 *   bundle, in `dist-cli/<dir>/` with the same layout as the package (lib/index.js, wasm/,
 *   main.wasm.gz, package.json), so installing the CLI from the repository needs no dependency
 *   from the registry. The build defines `__TFGUARD_HCL2JSON_DIR__` as that directory's name; it
 *   is not defined anywhere else.
 */
import * as nodePath from 'node:path';

declare const __TFGUARD_HCL2JSON_DIR__: string | undefined;

function vendoredDir(): string | null {
  return typeof __TFGUARD_HCL2JSON_DIR__ === 'string'
    ? nodePath.join(__dirname, __TFGUARD_HCL2JSON_DIR__)
    : null;
}

/** Absolute path of hcl2json's main module (`lib/index.js`). */
export function hcl2jsonMain(): string {
  const dir = vendoredDir();
  return dir === null ? require.resolve('@cdktf/hcl2json') : nodePath.join(dir, 'lib', 'index.js');
}

/** Absolute path of hcl2json's package.json (its version is part of the cache fingerprint). */
export function hcl2jsonPackageJson(): string {
  const dir = vendoredDir();
  return dir === null ? require.resolve('@cdktf/hcl2json/package.json') : nodePath.join(dir, 'package.json');
}
