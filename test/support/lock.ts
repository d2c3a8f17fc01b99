/**
 * Shared fixtures for the lock-file rule tests (`test/rules/lock-*.test.ts`, one file per rule and
 * `lock-scenarios.test.ts`), whose rows run in the one rule harness (`rule-table.ts`, re-exported
 * here: `lockRuleTable` is `ruleTable` with `{ pipeline: 'lock' }`).
 */
import { createHash } from 'node:crypto';
import { RegistryClient, hashEntries, hashZip } from '../../src/lockfile';
import type { ScanConfig } from '../../src/model';
import { generateTestKey, startRegistry } from './registry-server';
import type { RegistryServer } from './registry-server';
import { writeZip } from './terraform';
import { fakeH1, lockText, tf } from './lock-fixtures';
import type { Row } from './rule-table';

export { fakeH1, fakeZh, lineOf, lockText, tf } from './lock-fixtures';
export { closeLockParser, lockScan } from './lock-pipeline';
export { lockRuleTable, lockScenarioTable } from './rule-table';

// ---------------------------------------------------------------------------------------------
// Configurations and lock files
// ---------------------------------------------------------------------------------------------

export const AWS = 'registry.terraform.io/hashicorp/aws';
export const RANDOM = 'registry.terraform.io/hashicorp/random';
export const NULL = 'registry.terraform.io/hashicorp/null';
export const TOFU_AWS = 'registry.opentofu.org/hashicorp/aws';
/** The lock file's name (at the archive root, where the single root module is). */
export const L = '.terraform.lock.hcl';

/** A root requiring hashicorp/aws "~> 5.0". */
export const awsTf = tf({ aws: { source: 'hashicorp/aws', version: '~> 5.0' } });

/** A lock file with one aws 5.9.0 entry recording "~> 5.0" and the given hashes. */
export function lockWith(hashes: string[], version = '5.9.0'): string {
  return lockText([{ source: AWS, version, constraints: '~> 5.0', hashes }]);
}

/** The lock file `terraform init` writes for `awsTf`. */
export const goodLock = lockWith([fakeH1('aws')]);

/** `goodLock` plus an entry for hashicorp/null, which `awsTf` does not require. */
export const staleLock = lockText([
  { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
  { source: NULL, version: '3.2.2', hashes: [fakeH1('null')] },
]);

/** A call of a registry module, whose own provider requirements the archive does not hold. */
export const remoteModuleCall = `module "vpc" {\n  source  = "terraform-aws-modules/vpc/aws"\n  version = "5.0.0"\n}\n`;

// ---------------------------------------------------------------------------------------------
// Provider packages (real zips and unpacked files inside the archive)
// ---------------------------------------------------------------------------------------------

/** Where the root's own provider mirror keeps hashicorp/aws. */
export const MIRROR = 'terraform.d/plugins/registry.terraform.io/hashicorp/aws';
/** The packed aws 5.9.0 linux_amd64 package in that mirror. */
export const ZIP_PATH = `${MIRROR}/terraform-provider-aws_5.9.0_linux_amd64.zip`;
/** The executable inside the aws 5.9.0 package. */
export const EXE = 'terraform-provider-aws_v5.9.0';

/** The package as it was locked. */
export const providerZip = writeZip([{ name: EXE, data: 'real provider', mode: 0o755 }]);
/** The same package with other content. */
export const tamperedZip = writeZip([{ name: EXE, data: 'tampered provider', mode: 0o755 }]);
/** The locked content, zipped with directory entries. */
export const dirEntriesZip = writeZip([
  { name: 'bin/' },
  { name: `bin/${EXE}`, data: 'real provider', mode: 0o755 },
]);

const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');
/** The `h1:` of the package unpacked (what `providerZip` holds). */
export const unpackedH1 = hashEntries([{ path: EXE, sha256: sha256('real provider') }]);

export interface PackageHashes {
  /** `hashZip(providerZip)`. */
  zip: Awaited<ReturnType<typeof hashZip>>;
  /** `hashZip(dirEntriesZip)`. */
  dirEntries: Awaited<ReturnType<typeof hashZip>>;
}

let packageHashesOnce: Promise<PackageHashes> | undefined;

/** The `h1:`/`zh:` hashes of `providerZip` and `dirEntriesZip` (computed once per test file). */
export function packageHashes(): Promise<PackageHashes> {
  packageHashesOnce ??= (async () => ({
    zip: await hashZip(providerZip),
    dirEntries: await hashZip(dirEntriesZip),
  }))();
  return packageHashesOnce;
}

// ---------------------------------------------------------------------------------------------
// A real registry on 127.0.0.1 for the registry cross-check
// ---------------------------------------------------------------------------------------------

export const REGISTRY_HOST = 'registry.example.test';
/** The provider the registry serves. */
export const CLOUD = `${REGISTRY_HOST}/acme/cloud`;
export const CLOUD_PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];
export const cloudTf = tf({ cloud: { source: CLOUD, version: '~> 1.0' } });

/** A lock file with one entry for `CLOUD`. */
export function cloudLock(version: string, hashes: string[]): string {
  return lockText([{ source: CLOUD, version, constraints: '~> 1.0', hashes }]);
}

/**
 * Starts, for the test file, a registry (real HTTP, real zips, SHA256SUMS signed with an OpenPGP key
 * generated here) with these releases of acme/cloud for `CLOUD_PLATFORMS`:
 *
 * - 1.0.0: correct;
 * - 1.1.0: the SHA256SUMS served differ from those signed;
 * - 1.2.0: signed by a key the registry does not publish;
 * - 1.3.0: the download response carries no signing keys;
 * - 1.4.0: the download response lists the packages' hashes (h1: and zh:).
 *
 * Call at the top level of a test file; the result gives the running server inside hooks and tests.
 */
export function useTestRegistry(): () => RegistryServer {
  let reg: RegistryServer | undefined;
  beforeAll(async () => {
    const key = await generateTestKey('Test Registry');
    const other = await generateTestKey('Somebody Else');
    const r = (version: string, extra: object = {}) => ({
      namespace: 'acme',
      type: 'cloud',
      version,
      platforms: CLOUD_PLATFORMS,
      ...extra,
    });
    reg = await startRegistry({
      signingKey: key,
      releases: [
        r('1.0.0'),
        r('1.1.0', { tamperSums: true }),
        r('1.2.0', { signWith: other }),
        r('1.3.0', { keys: 'none' }),
        r('1.4.0', { packages: true }),
      ],
    });
  });
  afterAll(async () => {
    await reg?.close();
  });
  return () => {
    if (reg === undefined)
      throw new Error('the test registry is not running (use it inside hooks and tests)');
    return reg;
  };
}

/**
 * The files and settings of a registry cross-check of `cloudTf` with `lock`: `registry = true`,
 * `CLOUD`'s host mapped to `url`, and a fresh client (nothing is remembered between rows).
 */
export function registryRow(
  lock: string,
  url: string,
  config: Partial<ScanConfig> = {},
): Pick<Row, 'files' | 'config' | 'registry'> {
  return {
    files: { 'main.tf': cloudTf, [L]: lock },
    config: { registry: true, registryHosts: { [REGISTRY_HOST]: url }, ...config },
    registry: new RegistryClient({
      hosts: { [REGISTRY_HOST]: url },
      retries: 1,
      backoffMs: 5,
      timeoutMs: 2000,
    }),
  };
}
