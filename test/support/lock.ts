/**
 * Shared fixtures for the lock-file rule tests (`test/rules/lock-*.test.ts`, one file per rule and
 * `lock-scenarios.test.ts`), and their table.
 *
 * `lockRuleTable(ruleId, rows)` is the lock-file counterpart of `ruleTable` (`test/rules/table.ts`):
 * each row's files are packed into a real tar.gz and run through the lock-file half of the pipeline
 * (`test/lockfile/pipeline.ts`: archive reader, HCL parser, module loader, `analyzeLocks`, the
 * `lock-*` rules through the rule engine). A row lists EVERY lock finding the scan must produce, in
 * any order of rules: the table's rule by default, another lock rule where a finding names it
 * (`rule`). So a missing, extra or misplaced finding of any lock rule fails the row, and a row that
 * expects only its rule's findings also asserts that no other lock rule reports anything.
 */
import { createHash } from 'node:crypto';
import { RegistryClient, hashEntries, hashZip } from '../../src/lockfile';
import type { ScanConfig, Severity } from '../../src/model';
import { ruleById } from '../../src/rules';
import { compareStrings } from '../../src/rules/helpers';
import type { FileMap } from './archive';
import { generateTestKey, startRegistry } from './registry-server';
import type { RegistryServer } from './registry-server';
import { writeZip } from './terraform';
import { fakeH1, lockText, tf } from '../lockfile/fixtures';
import { closeLockParser, lockScan } from '../lockfile/pipeline';

export { fakeH1, fakeZh, lineOf, lockText, tf } from '../lockfile/fixtures';
export { closeLockParser, lockScan } from '../lockfile/pipeline';

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
): Pick<LockRow, 'files' | 'config' | 'registry'> {
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

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

export interface LockExpected {
  /** Defaults to the table's rule. */
  rule?: string;
  file: string;
  line: number;
  /** A substring the message must contain (each of them, for a list), or a pattern it matches. */
  message: string | string[] | RegExp;
  /** The fix's replacement text; omitted = the finding must have no fix. */
  fix?: string;
  /** Defaults to the rule's default severity. */
  severity?: Severity;
  /** A substring the note must contain; checked only when given. */
  note?: string;
}

export interface LockRow {
  name: string;
  files: FileMap;
  /** Scan settings over DEFAULT_CONFIG. */
  config?: Partial<ScanConfig>;
  /** The registry client of the scan (default: none, or one from `config.registryHosts`). */
  registry?: RegistryClient;
  /** Every lock finding of the scan. */
  expected: LockExpected[];
}

/** A row whose files or expectations need something from the test's hooks (a running registry,
 * computed hashes): `build` runs inside the test. */
export interface LazyLockRow {
  name: string;
  build: () => Omit<LockRow, 'name'> | Promise<Omit<LockRow, 'name'>>;
}

export type LockRowSpec = LockRow | LazyLockRow;

function severityOf(ruleId: string): Severity {
  const rule = ruleById(ruleId);
  if (rule === undefined) throw new Error(`no rule "${ruleId}" in RULES`);
  return rule.defaultSeverity;
}

function messageMatcher(message: string | string[] | RegExp): unknown {
  if (typeof message === 'string') return expect.stringContaining(message);
  if (message instanceof RegExp) return expect.stringMatching(message);
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return expect.stringMatching(new RegExp(`^${message.map((m) => `(?=[\\s\\S]*${escape(m)})`).join('')}`));
}

async function checkRow(spec: LockRowSpec, defaultRule: string | undefined): Promise<void> {
  const row = 'build' in spec ? await spec.build() : spec;
  const { findings } = await lockScan(row.files, {
    ...(row.config === undefined ? {} : { config: row.config }),
    ...(row.registry === undefined ? {} : { registry: row.registry }),
  });
  const actual = findings.map((f) => ({
    rule: f.ruleId,
    file: f.file,
    line: f.line,
    message: f.message,
    fix: f.fix?.replacement ?? null,
    severity: f.severity,
    note: f.note ?? null,
  }));
  const withRules = row.expected.map((e) => {
    const rule = e.rule ?? defaultRule;
    if (rule === undefined) throw new Error(`${spec.name}: a scenario row names the rule of every finding`);
    return { ...e, rule };
  });
  // The engine's order (file, line, rule); findings of one rule on one line in the order written.
  const sorted = [...withRules].sort(
    (a, b) => compareStrings(a.file, b.file) || a.line - b.line || compareStrings(a.rule, b.rule),
  );
  const expected = sorted.map((e, i) => ({
    rule: e.rule,
    file: e.file,
    line: e.line,
    message: messageMatcher(e.message),
    fix: e.fix ?? null,
    severity: e.severity ?? severityOf(e.rule),
    note: e.note === undefined ? (actual[i]?.note ?? null) : expect.stringContaining(e.note),
  }));
  expect(actual).toEqual(expected);
}

function closeParserAfterAll(): void {
  afterAll(async () => {
    await closeLockParser();
  });
}

/**
 * The table of one lock rule. Call at the top level of the test file (it also closes the lock
 * pipeline's parser after the file).
 */
export function lockRuleTable(ruleId: string, rows: LockRowSpec[]): void {
  severityOf(ruleId);
  closeParserAfterAll();
  describe(`rule ${ruleId}`, () => {
    it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
      await checkRow(row, ruleId);
    });
  });
}

/** Rows about the whole set of lock findings, each naming the rule of every expected finding. */
export function lockScenarioTable(title: string, rows: LockRowSpec[]): void {
  closeParserAfterAll();
  describe(title, () => {
    it.each(rows.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
      await checkRow(row, undefined);
    });
  });
}
