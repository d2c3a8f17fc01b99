/**
 * `planLockFixes` on the cases where a lock file is rewritten only in part, or not at all: each row
 * is scanned through the real lock pipeline (archive, parser, loader, `analyzeLocks`, rules) with
 * the fake registry (signed SHA256SUMS) and the real `ReleaseHashResolver`; the plan must fix
 * exactly the findings it can, say why it leaves the others, and never rewrite a file Terraform
 * itself would refuse or whose annotations a rewrite would drop.
 */
import { planLockFixes } from '../../src/fix';
import type { LockFixPlan } from '../../src/fix';
import { formatLockFile, RegistryClient, ReleaseHashResolver } from '../../src/lockfile';
import type { ScanConfig } from '../../src/model';
import type { FileMap } from '../support/archive';
import {
  AWS,
  CLOUD,
  L,
  awsTf,
  closeLockParser,
  cloudLock,
  fakeH1,
  goodLock,
  lockScan,
  lockText,
  NULL,
  REGISTRY_HOST,
  remoteModuleCall,
  staleLock,
  tf,
  useTestRegistry,
} from '../support/lock';

const registry = useTestRegistry();
afterAll(async () => {
  await closeLockParser();
});

interface Planned {
  plan: LockFixPlan;
  /** rule id → reason, for the findings left alone. */
  skipped: Record<string, string>;
  fixed: string[];
  /** The rewritten lock file, or null. */
  text: string | null;
}

async function plan(
  files: FileMap,
  options: {
    withRegistry?: boolean;
    config?: Partial<ScanConfig>;
    platforms?: string[];
    rules?: string[];
  } = {},
): Promise<Planned> {
  const url = registry().url;
  const client = new RegistryClient({ hosts: { [REGISTRY_HOST]: url }, retries: 0, timeoutMs: 3000 });
  const config: Partial<ScanConfig> = {
    ...(options.withRegistry ? { registry: true, registryHosts: { [REGISTRY_HOST]: url } } : {}),
    ...options.config,
  };
  const { findings, analysis, ctx } = await lockScan(files, {
    config,
    ...(options.withRegistry ? { registry: client } : {}),
  });
  const result = await planLockFixes({
    findings,
    roots: ctx.roots.map((t) => ({ path: t.root, providers: t.providers, remoteModules: t.remoteCalls })),
    lock: analysis,
    platforms: options.platforms ?? ['linux_amd64'],
    ...(options.rules === undefined ? {} : { rules: new Set(options.rules) }),
    registry: options.withRegistry ? new ReleaseHashResolver({ client }) : null,
    read: (file) => {
      const content = files[file];
      return Promise.resolve(content === undefined ? null : Buffer.from(content as string));
    },
  });
  return {
    plan: result,
    skipped: Object.fromEntries(result.skipped.map((s) => [s.finding.ruleId, s.reason])),
    fixed: [...result.fixed.keys()].map((f) => f.ruleId).sort(),
    text: result.edits.get(L)?.text ?? null,
  };
}

describe('planLockFixes', () => {
  it('removes a stale entry offline and leaves the rest of the file as terraform writes it', async () => {
    const p = await plan({ 'main.tf': awsTf, [L]: staleLock });
    expect(p.fixed).toEqual(['lock-provider-stale']);
    expect(p.text).toBe(goodLock);
    expect(p.plan.edits.get(L)?.range).toMatchObject({ start: { byte: 0 }, end: { byte: staleLock.length } });
  });

  it('rewrites what it can offline and says that adding needs the registry', async () => {
    const files = {
      'main.tf': tf({
        aws: { source: 'hashicorp/aws', version: '~> 5.0' },
        random: { source: 'hashicorp/random', version: '~> 3.0' },
      }),
      [L]: staleLock,
    };
    const p = await plan(files);
    expect(p.fixed).toEqual(['lock-provider-stale']);
    expect(p.skipped['lock-provider-missing']).toMatch(/needs the registry: run with --registry/);
    expect(p.text).toBe(goodLock);
  });

  it('keeps the header of the engine that wrote the file', async () => {
    const tofu = staleLock.replace('"terraform init"', '"tofu init"');
    const p = await plan({ 'main.tf': awsTf, [L]: tofu });
    expect(p.text).toBe(goodLock.replace('"terraform init"', '"tofu init"'));
  });

  it('does not rewrite a lock file terraform refuses (lock-parse-error)', async () => {
    const broken = staleLock.replace('version     = "5.9.0"', 'version     = "v5.9.0"');
    const p = await plan({ 'main.tf': awsTf, [L]: broken });
    expect(p.plan.edits.size).toBe(0);
    expect(p.skipped['lock-provider-stale']).toMatch(
      /has errors \(lock-parse-error, line \d+\); fix those first/,
    );
  });

  it('does not rewrite a lock file with tfguard: annotations, which a rewrite would drop', async () => {
    const annotated = staleLock.replace(
      'provider "registry.terraform.io/hashicorp/aws" {',
      'provider "registry.terraform.io/hashicorp/aws" { # tfguard:ignore lock-hash-malformed kept on purpose',
    );
    const p = await plan({ 'main.tf': awsTf, [L]: annotated });
    expect(p.plan.edits.size).toBe(0);
    expect(p.skipped['lock-provider-stale']).toMatch(/tfguard: annotations/);
  });

  it('adds no entry to a tree that calls remote modules, and leaves their constraints drift', async () => {
    const files = {
      'main.tf': tf({ cloud: { source: CLOUD, version: '~> 1.0' } }, remoteModuleCall),
      [L]: lockText([{ source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] }]),
    };
    const p = await plan(files, { withRegistry: true });
    expect(p.plan.edits.size).toBe(0);
    expect(p.skipped['lock-provider-missing']).toMatch(/remote modules/);
  });

  it('adds the hashes it can and leaves a platform the registry has no package for', async () => {
    const p = await plan(
      {
        'main.tf': tf({ cloud: { source: CLOUD, version: '~> 1.0' } }),
        [L]: cloudLock('1.0.0', [fakeH1('x')]),
      },
      {
        withRegistry: true,
        config: { platforms: ['linux_amd64', 'freebsd_arm'] },
        platforms: ['linux_amd64', 'freebsd_arm'],
      },
    );
    expect(p.fixed).toEqual(['lock-platform-coverage']);
    expect(p.skipped['lock-platform-coverage']).toMatch(/no package of that version for the platform/);
    const zh = registry().zh('acme', 'cloud', '1.0.0');
    const h1 = registry().h1('acme', 'cloud', '1.0.0');
    expect(p.text).toBe(
      formatLockFile([
        {
          source: CLOUD,
          version: '1.0.0',
          constraints: '~> 1.0',
          hashes: [fakeH1('x'), ...Object.values(zh), h1.linux_amd64 as string],
        },
      ]),
    );
  });

  it('writes no entry from checksums that fail their signature', async () => {
    const p = await plan(
      {
        'main.tf': tf({ cloud: { source: CLOUD, version: '~> 1.0' } }),
        [L]: cloudLock('1.1.0', [fakeH1('x')]),
      },
      {
        withRegistry: true,
        config: { platforms: ['linux_amd64', 'darwin_arm64'] },
        platforms: ['linux_amd64', 'darwin_arm64'],
      },
    );
    expect(p.plan.edits.size).toBe(0);
    expect(p.skipped['lock-platform-coverage']).toMatch(/signature|SHA256SUMS/);
  });

  it('writes a missing lock file only when every provider can be locked', async () => {
    const files = {
      'main.tf': tf({
        cloud: { source: CLOUD, version: '~> 1.0' },
        other: { source: `${REGISTRY_HOST}/acme/nothing`, version: '~> 1.0' },
      }),
    };
    const p = await plan(files, { withRegistry: true });
    expect(p.plan.edits.size).toBe(0);
    expect(p.skipped['lock-missing']).toMatch(/cannot lock registry\.example\.test\/acme\/nothing: .*404/);
  });

  it('fixes only the selected rules (--rule), still writing the whole file', async () => {
    const files = { 'main.tf': awsTf, [L]: staleLock.replace('"~> 5.0"', '"~> 5.1"') };
    const all = await plan(files);
    expect(all.fixed).toEqual(['lock-constraints-drift', 'lock-provider-stale']);
    expect(all.text).toBe(goodLock);
    const staleOnly = await plan(files, { rules: ['lock-provider-stale'] });
    expect(staleOnly.fixed).toEqual(['lock-provider-stale']);
    expect(staleOnly.text).toBe(goodLock.replace('"~> 5.0"', '"~> 5.1"'));
    expect(staleOnly.text).not.toContain(NULL);
    const none = await plan(files, { rules: ['root-module-unbounded'] });
    expect(none.plan.edits.size).toBe(0);
  });
});
