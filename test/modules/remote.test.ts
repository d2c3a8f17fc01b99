/**
 * Remote module resolution end to end: real archives scanned through the real pipeline, a module
 * registry on 127.0.0.1 (test/support/registry-server.ts) mapped with `registry_hosts` from an
 * operator `--config`, and installed copies (`.terraform/modules`) read without any network.
 */
import { LocalObjectStore } from '../../src/storage/local';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import { selectModuleVersion } from '../../src/modules';
import { startRegistry } from '../support/registry-server';
import type { FakeModule, RegistryServer } from '../support/registry-server';
import { findingsOf, scanFiles } from '../support/scan';
import type { FileMap } from '../support/archive';
import { lines } from '../support/rule-table';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import reportSchema from '../../docs/report.schema.json';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const AWS4_LOCK = lines(
  'provider "registry.terraform.io/hashicorp/aws" {',
  '  version     = "4.67.0"',
  '  constraints = "~> 4.0"',
  '  hashes = ["h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]',
  '}',
);

/** A root pinning aws ~> 4.0 and calling `source` (version `version`) as module "eks". */
function rootCalling(source: string, version: string | null, aws = '~> 4.0'): string {
  return lines(
    'terraform {',
    '  required_providers {',
    `    aws = { source = "hashicorp/aws", version = "${aws}" }`,
    '  }',
    '}',
    'module "eks" {',
    `  source  = "${source}"`,
    ...(version === null ? [] : [`  version = "${version}"`]),
    '}',
  );
}

const EKS: FakeModule = {
  namespace: 'acme',
  name: 'eks',
  system: 'aws',
  versions: [
    {
      version: '19.21.0',
      root: { providers: [{ name: 'aws', namespace: 'hashicorp', version: '>= 4.57' }] },
    },
    {
      version: '20.8.4',
      root: {
        providers: [
          { name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: '>= 5.34' },
          { name: 'tls', namespace: 'hashicorp', source: 'hashicorp/tls', version: '>= 3.0' },
        ],
        dependencies: [
          { name: 'kms', source: 'acme/kms/aws', version: '~> 2.1' },
          { name: 'nodes', source: './modules/nodes' },
        ],
      },
      submodules: [
        {
          path: 'modules/nodes',
          providers: [{ name: 'aws', namespace: 'hashicorp', source: 'hashicorp/aws', version: '>= 5.30' }],
          dependencies: [{ name: 'iam', source: '../iam' }],
        },
        { path: 'modules/iam', providers: [{ name: 'cloudinit', namespace: '', source: '', version: '' }] },
      ],
    },
    { version: '20.9.0-beta1', root: { providers: [{ name: 'aws', version: '>= 6.0' }] } },
    { version: '21.0.0', root: { providers: [{ name: 'aws', version: '>= 6.0' }] } },
  ],
};

const KMS: FakeModule = {
  namespace: 'acme',
  name: 'kms',
  system: 'aws',
  versions: [
    { version: '2.1.0', root: { providers: [{ name: 'aws', source: 'hashicorp/aws', version: '>= 4.33' }] } },
    {
      version: '2.2.1',
      root: { providers: [{ name: 'random', source: 'hashicorp/random', version: '>= 3.1' }] },
    },
    { version: '3.0.0', root: { providers: [] } },
  ],
};

let registry: RegistryServer;
let cacheDir: string;

beforeAll(async () => {
  registry = await startRegistry({ modules: [EKS, KMS] });
  cacheDir = mkdtempSync(path.join(tmpdir(), 'tfguard-remote-'));
});

afterAll(async () => {
  await registry.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

beforeEach(() => {
  registry.requests.length = 0;
});

/** Scans with network resolution on, the public registry host mapped to the fake registry by an
 * operator `--config` (never the archive). */
function scanRemote(
  files: FileMap,
  options: Omit<ScanOptions, 'config' | 'configText'> = {},
): Promise<Report> {
  return scanFiles(files, {
    remoteModules: true,
    configText: {
      name: 'ops.hcl',
      text: `registry_hosts = { "registry.terraform.io" = "${registry.url}" }\n`,
    },
    ...options,
  });
}

function tree(report: Report) {
  const t = report.roots[0]?.remoteModuleTree;
  if (t === undefined) throw new Error('no remote module tree');
  return t;
}

describe('version selection as terraform init', () => {
  it.each([
    ['~> 20.0', '20.8.4'],
    ['>= 19.0', '21.0.0'],
    ['< 20.0', '19.21.0'],
    [null, '21.0.0'],
    ['20.9.0-beta1', '20.9.0-beta1'],
    ['>= 20.9.0-beta1', '21.0.0'],
    // "= 20.9.0-beta1" (a space after "=") selects nothing: terraform 1.11 checks pre-releases in
    // go-versions' syntax too, which does not read it (test/modules/remote-module-version-oracle.test.ts)
    ['=20.9.0-beta1', '20.9.0-beta1'],
    ['~> 20', '21.0.0'],
  ])('%s selects %s (pre-releases only when named exactly)', (constraint, expected) => {
    expect(
      selectModuleVersion(['19.21.0', '20.8.4', '20.9.0-beta1', '21.0.0', 'not-a-version'], constraint),
    ).toEqual({
      version: expected,
    });
  });

  it('says what is published when nothing matches, and rejects an invalid constraint', () => {
    expect(selectModuleVersion(['1.0.0', '1.1.0'], '~> 2.0')).toEqual({
      error: 'no published version matches "~> 2.0" (newest: 1.1.0, 1.0.0)',
    });
    expect(selectModuleVersion(['1.0.0'], '>>= 1')).toEqual({ error: expect.stringContaining('is invalid') });
  });
});

describe('registry modules through provider metadata', () => {
  it('names the registry module and version that conflicts with the root (aws ~> 4.0 vs >= 5.34)', async () => {
    const report = await scanRemote({ 'main.tf': rootCalling('acme/eks/aws', '~> 20.0') });
    const conflicts = findingsOf(report, 'incompatible-constraints');
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]).toMatchObject({ file: 'main.tf', line: 3 });
    expect(conflicts[0]?.message).toContain(
      '"." requires "~> 4.0", remote module "eks" (acme/eks/aws 20.8.4) requires ">= 5.34"',
    );
    expect(findingsOf(report, 'module-unresolved')).toEqual([]);
  });

  it('follows dependencies and submodule paths, and lists every module with its origin', async () => {
    const report = await scanRemote({ 'main.tf': rootCalling('acme/eks/aws', '~> 20.0', '>= 5.40') });
    expect(
      tree(report).map((m) => [m.key, m.parent, m.address, m.resolvedVersion, m.origin, m.providers]),
    ).toEqual([
      [
        'eks',
        null,
        'acme/eks/aws',
        '20.8.4',
        'metadata',
        [
          { source: 'registry.terraform.io/hashicorp/aws', constraints: ['>= 5.34'] },
          { source: 'registry.terraform.io/hashicorp/tls', constraints: ['>= 3.0'] },
        ],
      ],
      [
        'eks.kms',
        'eks',
        'acme/kms/aws',
        '2.2.1',
        'metadata',
        [{ source: 'registry.terraform.io/hashicorp/random', constraints: ['>= 3.1'] }],
      ],
      [
        'eks.nodes',
        'eks',
        'acme/eks/aws//modules/nodes',
        '20.8.4',
        'metadata',
        [{ source: 'registry.terraform.io/hashicorp/aws', constraints: ['>= 5.30'] }],
      ],
      [
        'eks.nodes.iam',
        'eks.nodes',
        'acme/eks/aws//modules/iam',
        '20.8.4',
        'metadata',
        [{ source: 'registry.terraform.io/hashicorp/cloudinit', constraints: [] }],
      ],
    ]);
    expect(report.roots[0]?.providers).toEqual([
      { source: 'registry.terraform.io/hashicorp/aws', constraints: '>= 5.30.0, >= 5.34.0, >= 5.40.0' },
      { source: 'registry.terraform.io/hashicorp/cloudinit', constraints: '' },
      { source: 'registry.terraform.io/hashicorp/random', constraints: '>= 3.1.0' },
      { source: 'registry.terraform.io/hashicorp/tls', constraints: '>= 3.0.0' },
    ]);
    expect(report.roots[0]?.remoteModules).toEqual([
      {
        module: '.',
        name: 'eks',
        source: 'acme/eks/aws',
        version: '~> 20.0',
        key: 'eks',
        address: 'acme/eks/aws',
        resolvedVersion: '20.8.4',
        origin: 'metadata',
      },
    ]);
    // One discovery, one version list per module: nothing downloaded.
    expect([...registry.requests].sort()).toEqual([
      '/.well-known/terraform.json',
      '/v1/modules/acme/eks/aws/versions',
      '/v1/modules/acme/kms/aws/versions',
    ]);
  });

  it('reports a provider that only a remote module needs as missing from the lock file', async () => {
    const report = await scanRemote({
      'main.tf': rootCalling('acme/kms/aws', '2.2.1'),
      '.terraform.lock.hcl': AWS4_LOCK,
    });
    expect(findingsOf(report, 'lock-provider-missing').map((f) => f.message)).toEqual([
      'provider hashicorp/random is required (by remote module "eks" (acme/kms/aws 2.2.1)) but .terraform.lock.hcl has no entry for it; terraform init -lockfile=readonly fails',
    ]);
  });

  it('judges stale lock entries once every remote module resolved, and not before', async () => {
    const files = {
      'main.tf': rootCalling('acme/kms/aws', '3.0.0'),
      '.terraform.lock.hcl':
        AWS4_LOCK +
        lines(
          'provider "registry.terraform.io/hashicorp/null" {',
          '  version = "3.2.2"',
          '  hashes = ["h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]',
          '}',
        ),
    };
    const online = await scanRemote(files);
    expect(findingsOf(online, 'lock-provider-stale').map((f) => f.line)).toEqual([6]);
    const offline = await scanFiles(files);
    expect(findingsOf(offline, 'lock-provider-stale')).toEqual([]);
  });

  it('names a pre-release only when the constraint names it exactly', async () => {
    const exact = await scanRemote({ 'main.tf': rootCalling('acme/eks/aws', '20.9.0-beta1', '>= 6.0') });
    expect(tree(exact)[0]?.resolvedVersion).toBe('20.9.0-beta1');
    const range = await scanRemote({ 'main.tf': rootCalling('acme/eks/aws', '>= 20.8, < 21.0', '>= 6.0') });
    expect(tree(range)[0]?.resolvedVersion).toBe('20.8.4');
  });

  it('leaves a module unresolved, with one notice, when no version matches', async () => {
    const report = await scanRemote({ 'main.tf': rootCalling('acme/eks/aws', '~> 22.0') });
    expect(findingsOf(report, 'module-unresolved').map((f) => [f.file, f.line, f.message])).toEqual([
      [
        'main.tf',
        6,
        'remote module "eks" (source "acme/eks/aws", version "~> 22.0") was not resolved: no published version matches "~> 22.0" (newest: 21.0.0, 20.9.0-beta1, 20.8.4)',
      ].map((x, i) => (i === 2 ? expect.stringContaining(x as string) : x)),
    ]);
  });
});

describe('the JSON report', () => {
  it('validates against docs/report.schema.json with resolved, nested and unresolved modules', async () => {
    const report = await scanRemote({
      'main.tf':
        rootCalling('acme/eks/aws', '~> 20.0') + lines('module "x" {', '  source = "acme/missing/aws"', '}'),
    });
    expect(tree(report).map((m) => m.origin)).toEqual(['metadata', 'metadata', 'metadata', 'metadata', null]);
    const ajv = new Ajv({ allErrors: true, strict: true });
    addFormats(ajv);
    const validate = ajv.compile(reportSchema);
    expect(validate(JSON.parse(JSON.stringify(report)))).toBe(true);
    expect(validate.errors ?? null).toBeNull();
  });
});

describe('without --remote-modules', () => {
  it('sends no request and says once per module what was not checked', async () => {
    const report = await scanFiles({
      'main.tf': rootCalling('acme/eks/aws', '~> 20.0'),
      'envs/b/main.tf': lines('module "eks" {', '  source = "../../shared"', '}'),
      'shared/main.tf': lines('module "net" {', '  source = "github.com/acme/net?ref=v1.0.0"', '}'),
    });
    expect(registry.requests).toEqual([]);
    const notices = findingsOf(report, 'module-unresolved');
    expect(notices.map((f) => [f.module, f.file, f.line])).toEqual([
      ['.', 'main.tf', 6],
      ['shared', 'shared/main.tf', 1],
    ]);
    expect(notices[0]?.message).toContain('its provider requirements');
    expect(notices[0]?.note).toContain('--remote-modules');
    expect(report.roots.map((r) => r.remoteModuleTree?.map((m) => [m.key, m.origin]))).toEqual([
      [['eks', null]],
      [['eks.net', null]],
    ]);
  });
});

describe('installed copies in the archive (.terraform/modules), without network', () => {
  const manifest = JSON.stringify({
    Modules: [
      { Key: '', Source: '', Dir: '.' },
      {
        Key: 'eks',
        Source: 'registry.terraform.io/acme/eks/aws',
        Version: '20.8.4',
        Dir: '.terraform/modules/eks',
      },
      { Key: 'eks.nodes', Source: './modules/nodes', Dir: '.terraform/modules/eks/modules/nodes' },
      {
        Key: 'net',
        Source: 'git::https://github.com/acme/net.git//modules/sub?ref=v1.2.0',
        Dir: '.terraform/modules/net/modules/sub',
      },
    ],
  });
  const files: FileMap = {
    'main.tf':
      rootCalling('acme/eks/aws', '~> 20.0') +
      lines('module "net" {', '  source = "github.com/acme/net//modules/sub?ref=v1.2.0"', '}'),
    '.terraform/modules/modules.json': manifest,
    '.terraform/modules/eks/main.tf': lines(
      'terraform {',
      '  required_providers {',
      '    aws = { source = "hashicorp/aws", version = ">= 5.34" }',
      '  }',
      '}',
      'module "nodes" {',
      '  source = "./modules/nodes"',
      '}',
    ),
    '.terraform/modules/eks/modules/nodes/main.tf': lines(
      'resource "random_id" "x" {',
      '  byte_length = 4',
      '}',
    ),
    '.terraform/modules/net/modules/sub/main.tf': lines(
      'terraform {',
      '  required_providers {',
      '    google = { source = "hashicorp/google", version = ">= 5.0" }',
      '  }',
      '}',
    ),
  };

  it('reads them first, with no flag and no request, and reports the conflict', async () => {
    const report = await scanFiles(files);
    expect(registry.requests).toEqual([]);
    expect(tree(report).map((m) => [m.key, m.address, m.resolvedVersion, m.origin])).toEqual([
      ['eks', 'acme/eks/aws', '20.8.4', 'archive'],
      ['eks.nodes', 'acme/eks/aws//modules/nodes', '20.8.4', 'archive'],
      ['net', 'git::https://github.com/acme/net.git//modules/sub', 'v1.2.0', 'archive'],
    ]);
    expect(findingsOf(report, 'module-unresolved')).toEqual([]);
    expect(findingsOf(report, 'incompatible-constraints')[0]?.message).toContain(
      'remote module "eks" (acme/eks/aws 20.8.4) requires ">= 5.34"',
    );
  });

  it('does not trust a copy whose recorded version the constraint no longer allows', async () => {
    const report = await scanFiles({ ...files, 'main.tf': rootCalling('acme/eks/aws', '~> 21.0') });
    expect(findingsOf(report, 'module-unresolved')[0]?.message).toContain(
      'its installed copy is version 20.8.4, which "~> 21.0" does not allow',
    );
  });
});

describe('the cache', () => {
  it('answers a rescan without a request', async () => {
    const store = new LocalObjectStore(cacheDir);
    const files = { 'main.tf': rootCalling('acme/eks/aws', '~> 20.0', '>= 5.40') };
    const first = await scanRemote(files, { remoteModuleCache: store });
    expect(registry.requests.length).toBeGreaterThan(0);
    registry.requests.length = 0;
    const stats: number[] = [];
    const second = await scanRemote(files, {
      remoteModuleCache: store,
      onRemoteStats: (s) => stats.push(s.requests),
    });
    expect(registry.requests).toEqual([]);
    expect(stats).toEqual([0]);
    expect(second.roots).toEqual(first.roots);
    // The calls moved: the cached resolution is placed at their new lines.
    const moved = await scanRemote({ 'main.tf': `\n\n${files['main.tf']}` }, { remoteModuleCache: store });
    expect(registry.requests).toEqual([]);
    expect(moved.roots[0]?.remoteModuleTree?.map((m) => [m.key, m.line])).toEqual([
      ['eks', 8],
      ['eks.kms', 8],
      ['eks.nodes', 8],
      ['eks.nodes.iam', 8],
    ]);
  });

  it('asks again once the version lists are older than their lifetime', async () => {
    const store = new LocalObjectStore(path.join(cacheDir, 'ttl'));
    const files = { 'main.tf': rootCalling('acme/kms/aws', '~> 2.0') };
    await scanRemote(files, { remoteModuleCache: store, remoteModuleSettings: { versionsTtlMs: 0 } });
    registry.requests.length = 0;
    await scanRemote(files, { remoteModuleCache: store, remoteModuleSettings: { versionsTtlMs: 0 } });
    expect(registry.requests).toEqual(['/.well-known/terraform.json', '/v1/modules/acme/kms/aws/versions']);
  });

  it('does not keep a resolution that left a module unresolved', async () => {
    const store = new LocalObjectStore(path.join(cacheDir, 'partial'));
    const files = {
      'main.tf':
        rootCalling('acme/kms/aws', '~> 2.0') + lines('module "x" {', '  source = "acme/missing/aws"', '}'),
    };
    await scanRemote(files, { remoteModuleCache: store });
    registry.requests.length = 0;
    const again = await scanRemote(files, { remoteModuleCache: store });
    // kms comes from its cached version list; the missing module is asked for again.
    expect(registry.requests).toEqual([
      '/.well-known/terraform.json',
      '/v1/modules/acme/missing/aws/versions',
    ]);
    expect(findingsOf(again, 'module-unresolved').map((f) => f.line)).toEqual([10]);
  });
});
