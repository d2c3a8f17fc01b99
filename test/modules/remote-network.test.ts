/**
 * Remote resolution over the network when metadata is not enough: packages downloaded from a module
 * registry on 127.0.0.1 (OpenTofu-style answers without provider metadata, `X-Terraform-Get` and
 * `{"location"}`, redirects), from a git host stood in for by a real git repository on disk
 * (`git archive` of its tags and commits), and everything that must not work: hosts nobody allowed,
 * redirects elsewhere, hanging and garbage answers, oversized downloads.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Report } from '../../src/report/types';
import type { ScanOptions } from '../../src/scan/types';
import { lines } from '../support/rule-table';
import { makeTarGz } from '../support/archive';
import type { FileMap } from '../support/archive';
import { gitArchive, gitRepo } from '../support/git';
import type { GitRepo } from '../support/git';
import { startRegistry } from '../support/registry-server';
import type { FakeModule, RegistryServer } from '../support/registry-server';
import { findingsOf, scanFiles } from '../support/scan';
import { ManualClock } from '../support/clock';

const NET_PACKAGE = {
  'main.tf': lines(
    'terraform {',
    '  required_providers {',
    '    google = { source = "hashicorp/google", version = ">= 5.0" }',
    '  }',
    '}',
    'module "sub" {',
    '  source = "./modules/sub"',
    '}',
  ),
  'modules/sub/main.tf': lines(
    'resource "random_id" "x" {',
    '  byte_length = 4',
    '}',
    'module "leaf" {',
    '  source = "../leaf"',
    '}',
  ),
  'modules/leaf/versions.tf': lines(
    'terraform {',
    '  required_providers {',
    '    time = { source = "hashicorp/time", version = "~> 0.9" }',
    '  }',
    '}',
  ),
};

/** No provider metadata (as the OpenTofu registry answers): every version must be downloaded. */
const NET: FakeModule = {
  namespace: 'acme',
  name: 'net',
  system: 'google',
  versions: [
    { version: '1.0.0', files: NET_PACKAGE },
    { version: '1.1.0', files: NET_PACKAGE, download: 'json' },
    { version: '1.2.0', download: { location: './1.2.0.tar.gz?archive=tar.gz', status: 204 } },
    { version: '1.3.0', download: { location: '/redirect/3/packages/acme/net/google/1.0.0.tar.gz' } },
    { version: '1.4.0', download: { location: '/elsewhere.tar.gz' } },
    { version: '1.5.0', download: { location: '/garbage.tar.gz' } },
    { version: '1.6.0', download: { location: '/huge.tar.gz' } },
    {
      version: '1.7.0',
      download: { location: 'git::https://github.com/acme/net.git//modules/x?ref=v1.0.0' },
    },
    { version: '1.8.0', download: { location: 'git::https://git.example.com/acme/net.git?ref=v1.0.0' } },
  ],
};

/** Metadata for the root, none for a submodule: that one comes from the package. */
const PARTIAL: FakeModule = {
  namespace: 'acme',
  name: 'partial',
  system: 'aws',
  versions: [
    {
      version: '3.0.0',
      root: { providers: [{ name: 'aws', source: 'hashicorp/aws', version: '>= 5.0' }] },
      files: {
        'main.tf': 'terraform {}\n',
        'modules/x/main.tf': lines(
          'terraform {',
          '  required_providers {',
          '    azurerm = { source = "hashicorp/azurerm", version = ">= 3.0" }',
          '  }',
          '}',
        ),
      },
    },
  ],
};

const BROKEN: FakeModule = {
  namespace: 'acme',
  name: 'broken',
  system: 'aws',
  versions: [
    { version: '1.0.0', files: { 'main.tf': 'terraform {\n  required_providers {\n' } },
    {
      version: '2.0.0',
      files: {
        'main.tf': 'module "a" {\n  source = "./a"\n}\n',
        'a/main.tf': 'module "back" {\n  source = "../"\n}\n',
      },
    },
  ],
};

const GIT_MODULE_V1 = {
  'modules/x/main.tf': lines(
    'terraform {',
    '  required_providers {',
    '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
    '  }',
    '}',
  ),
  'README.md': '# net\n',
};
const GIT_MODULE_V2 = {
  ...GIT_MODULE_V1,
  'modules/x/main.tf': GIT_MODULE_V1['modules/x/main.tf'].replace('>= 5.0', '>= 6.0'),
};

let registry: RegistryServer;
let gitHost: RegistryServer;
let repo: GitRepo;

beforeAll(async () => {
  repo = await gitRepo({ 'v1.0.0': GIT_MODULE_V1, 'v2.0.0': GIT_MODULE_V2 });
  const sha = repo.tags['v1.0.0'] as string;
  // The git host stand-in serves what GitHub and GitLab serve: `git archive` of a tag or commit,
  // wrapped in one top directory; GitHub redirects to the host that serves archives.
  gitHost = await startRegistry({
    modulesPath: null,
    files: {
      '/acme/net/archive/v1.0.0.tar.gz': gitArchive(repo, 'v1.0.0', 'net-v1.0.0'),
      [`/acme/net/archive/${sha}.tar.gz`]: gitArchive(repo, sha, `net-${sha}`),
      '/codeload/acme/net/tar.gz/v2.0.0': gitArchive(repo, 'v2.0.0', 'net-v2.0.0'),
      '/group/sub/net/-/archive/v2.0.0/net-v2.0.0.tar.gz': gitArchive(repo, 'v2.0.0', 'net-v2.0.0'),
    },
    redirects: { '/acme/net/archive/v2.0.0.tar.gz': '/redirect/1/codeload/acme/net/tar.gz/v2.0.0' },
  });
  registry = await startRegistry({
    modules: [NET, PARTIAL, BROKEN],
    files: {
      // `./1.2.0.tar.gz` relative to `.../1.2.0/download`
      '/v1/modules/acme/net/google/1.2.0/1.2.0.tar.gz': await makeTarGz(NET_PACKAGE),
      '/garbage.tar.gz': Buffer.from('this is not an archive at all'),
      '/huge.tar.gz': randomBytes(300_000),
    },
    redirects: { '/elsewhere.tar.gz': 'http://169.254.169.254/latest/meta-data/x.tar.gz' },
  });
});

afterAll(async () => {
  await Promise.all([registry.close(), gitHost.close()]);
  rmSync(repo.dir, { recursive: true, force: true });
});

beforeEach(() => {
  registry.requests.length = 0;
  registry.faults.length = 0;
  gitHost.requests.length = 0;
});

function ops(extra = ''): string {
  return (
    `registry_hosts = { "registry.opentofu.org" = "${registry.url}", "registry.terraform.io" = "${registry.url}" }\n` +
    extra
  );
}

function scanRemote(
  files: FileMap,
  config = ops(),
  options: Omit<ScanOptions, 'configText' | 'config'> = {},
): Promise<Report> {
  return scanFiles(files, {
    remoteModules: true,
    configText: { name: 'ops.hcl', text: config },
    remoteModuleSettings: { timeoutMs: 2000, retries: 0, maxDownloadBytes: 200_000 },
    ...options,
  });
}

function call(source: string, version: string | null = null, name = 'm'): string {
  return lines(
    `module "${name}" {`,
    `  source  = "${source}"`,
    ...(version === null ? [] : [`  version = "${version}"`]),
    '}',
  );
}

function remoteTree(report: Report): [string, string, string | null, string | null][] {
  return (report.roots[0]?.remoteModuleTree ?? []).map((m) => [
    m.key,
    m.address,
    m.resolvedVersion,
    m.origin ?? m.unresolved ?? null,
  ]);
}

function unresolved(report: Report): string[] {
  return findingsOf(report, 'module-unresolved').map((f) => f.message);
}

describe('registry modules without provider metadata: the package is downloaded', () => {
  it.each([
    ['1.0.0', '204 with X-Terraform-Get'],
    ['1.1.0', '200 with {"location"}'],
    ['1.2.0', 'a location relative to the download URL'],
    ['1.3.0', 'three redirects on the registry'],
  ])('%s: %s', async (version) => {
    const report = await scanRemote({ 'main.tf': call('acme/net/google', version) });
    expect(unresolved(report)).toEqual([]);
    expect(remoteTree(report)).toEqual([
      ['m', 'acme/net/google', version, 'download'],
      ['m.sub', 'acme/net/google//modules/sub', version, 'download'],
      ['m.sub.leaf', 'acme/net/google//modules/leaf', version, 'download'],
    ]);
    expect(report.roots[0]?.providers.map((p) => [p.source, p.constraints])).toEqual([
      ['registry.terraform.io/hashicorp/google', '>= 5.0.0'],
      ['registry.terraform.io/hashicorp/random', ''],
      ['registry.terraform.io/hashicorp/time', '~> 0.9'],
    ]);
  });

  it('under OpenTofu, from registry.opentofu.org, with the engine default host for providers', async () => {
    const report = await scanRemote(
      { 'main.tofu': call('acme/net/google', '~> 1.0.0') },
      ops('engine = "opentofu"\n'),
    );
    expect(remoteTree(report)[0]).toEqual(['m', 'acme/net/google', '1.0.0', 'download']);
    expect(report.roots[0]?.providers.map((p) => p.source)).toEqual([
      'registry.opentofu.org/hashicorp/google',
      'registry.opentofu.org/hashicorp/random',
      'registry.opentofu.org/hashicorp/time',
    ]);
  });

  it('uses the metadata it has and downloads the package for a submodule the metadata lacks', async () => {
    const report = await scanRemote({ 'main.tf': call('acme/partial/aws//modules/x', '3.0.0') });
    expect(remoteTree(report)).toEqual([['m', 'acme/partial/aws//modules/x', '3.0.0', 'download']]);
    const root = await scanRemote({ 'main.tf': call('acme/partial/aws', '3.0.0') });
    expect(remoteTree(root)).toEqual([['m', 'acme/partial/aws', '3.0.0', 'metadata']]);
  });

  it('a package whose files do not parse, and a package whose modules call each other in a cycle', async () => {
    const broken = await scanRemote({ 'main.tf': call('acme/broken/aws', '1.0.0') });
    expect(unresolved(broken)).toEqual([expect.stringContaining('its files do not parse: main.tf:')]);
    const cycle = await scanRemote({ 'main.tf': call('acme/broken/aws', '2.0.0') });
    expect(remoteTree(cycle).map((r) => r[0])).toEqual(['m', 'm.a', 'm.a.back']);
    expect(unresolved(cycle)).toEqual([expect.stringContaining('remote module "m.a.back"')]);
    expect(unresolved(cycle)[0]).toContain('a module cycle');
  });
});

describe('what must not be fetched or trusted', () => {
  it('a redirect to a host nobody allowed (cloud metadata address)', async () => {
    const report = await scanRemote({ 'main.tf': call('acme/net/google', '1.4.0') });
    expect(unresolved(report)).toEqual([
      expect.stringContaining('redirected to 169.254.169.254, which is not an allowed module host'),
    ]);
  });

  it('a registry host the operator did not map, named by the archive', async () => {
    const report = await scanRemote({ 'main.tf': call('registry.evil.example/acme/net/google', '1.0.0') });
    expect(unresolved(report)).toEqual([
      expect.stringContaining('registry host registry.evil.example is not contacted'),
    ]);
    expect(registry.requests).toEqual([]);
  });

  it('module_hosts in the archive is refused like registry_hosts', async () => {
    await expect(
      scanFiles(
        { 'main.tf': call('github.com/acme/net//modules/x?ref=v1.0.0') },
        { config: `module_hosts = { "github.com" = "${gitHost.url}" }\n`, remoteModules: true },
      ),
    ).rejects.toThrow(/"module_hosts" decides where tfguard downloads remote modules from/);
    expect(gitHost.requests).toEqual([]);
  });

  it('a git location from the registry on a host nobody allowed is named, not fetched', async () => {
    const report = await scanRemote({ 'main.tf': call('acme/net/google', '1.8.0') });
    expect(unresolved(report)).toEqual([
      expect.stringContaining('git host git.example.com offers no archive download tfguard knows'),
    ]);
  });

  it('a download that is not an archive, and one larger than the download limit', async () => {
    const garbage = await scanRemote({ 'main.tf': call('acme/net/google', '1.5.0') });
    expect(unresolved(garbage)).toEqual([expect.stringContaining('was not resolved')]);
    const huge = await scanRemote({ 'main.tf': call('acme/net/google', '1.6.0') });
    expect(unresolved(huge)).toEqual([expect.stringContaining('is larger than 200000 bytes')]);
  });

  it('a registry that never answers, and one that answers garbage or 500', async () => {
    registry.faults.push({ path: /\/versions$/, kind: 'hang', times: 1 });
    const hang = await scanRemote({ 'main.tf': call('acme/net/google', '1.0.0') }, ops(), {
      remoteModuleSettings: { timeoutMs: 300, retries: 0 },
    });
    expect(unresolved(hang)).toEqual([expect.stringContaining('no answer within 300 ms')]);
    registry.faults.push({ path: /\/versions$/, kind: 'garbage', times: 1 });
    const garbage = await scanRemote({ 'main.tf': call('acme/net/google', '1.0.0') });
    expect(unresolved(garbage)).toEqual([expect.stringContaining('did not return JSON')]);
    registry.faults.push({ path: /\/versions$/, kind: 'status', status: 500, times: 1 });
    const failing = await scanRemote({ 'main.tf': call('acme/net/google', '1.0.0') });
    expect(unresolved(failing)).toEqual([expect.stringContaining('answered 500')]);
  });

  it("the scan's deadline covers resolution: a hanging registry ends in a notice, not a timeout", async () => {
    registry.faults.push({ path: /\/versions$/, kind: 'hang', times: 1 });
    const clock = new ManualClock();
    const before = registry.requests.length;
    const scan = scanRemote({ 'main.tf': call('acme/net/google', '1.0.0') }, ops(), {
      timeoutMs: 3000,
      clock,
      remoteModuleSettings: { timeoutMs: 60_000, retries: 0 },
    });
    // Once the registry is being asked (it never answers), the resolution's budget passes (2 s of
    // the 3 s; the rest is kept for the rules and the report), the scan's own limit does not.
    // (Wait for the versions request itself: service discovery comes first and answers.)
    const hanging = (): boolean => registry.requests.slice(before).some((p) => /\/versions$/.test(p));
    while (!hanging()) await new Promise((r) => setTimeout(r, 10));
    clock.advance(2000);
    const report = await scan;
    expect(unresolved(report)).toEqual([
      expect.stringContaining("remote module resolution's time budget of 2.0 s ran out"),
    ]);
  });
});

describe('git sources on an allowed host (a git repository on disk stands in for it)', () => {
  const hosts = (): string =>
    ops(`module_hosts = { "github.com" = "${gitHost.url}", "gitlab.com" = "${gitHost.url}" }\n`);

  it('a GitHub tag, a full commit SHA, and a redirect to the archive host', async () => {
    const report = await scanRemote(
      {
        'main.tf':
          call('github.com/acme/net//modules/x?ref=v1.0.0', null, 'tag') +
          call(
            `git::https://github.com/acme/net.git//modules/x?ref=${repo.tags['v1.0.0'] as string}`,
            null,
            'sha',
          ) +
          call('git@github.com:acme/net.git//modules/x?ref=v2.0.0', null, 'redirected'),
      },
      hosts(),
    );
    expect(unresolved(report)).toEqual([]);
    expect(remoteTree(report)).toEqual([
      ['tag', 'git::https://github.com/acme/net.git//modules/x', 'v1.0.0', 'download'],
      ['sha', 'git::https://github.com/acme/net.git//modules/x', repo.tags['v1.0.0'], 'download'],
      ['redirected', 'git::https://github.com/acme/net.git//modules/x', 'v2.0.0', 'download'],
    ]);
    expect(report.roots[0]?.providers).toEqual([
      expect.objectContaining({
        source: 'registry.terraform.io/hashicorp/aws',
        constraints: '>= 5.0.0, >= 6.0.0',
      }),
    ]);
    expect(findingsOf(report, 'incompatible-constraints')).toEqual([]);
  });

  it('a GitLab project in a subgroup', async () => {
    const report = await scanRemote(
      { 'main.tf': call('git::https://gitlab.com/group/sub/net.git//modules/x?ref=v2.0.0') },
      hosts(),
    );
    expect(remoteTree(report)).toEqual([
      ['m', 'git::https://gitlab.com/group/sub/net.git//modules/x', 'v2.0.0', 'download'],
    ]);
  });

  it('a registry module whose download location is a GitHub tag', async () => {
    const report = await scanRemote({ 'main.tf': call('acme/net/google', '1.7.0') }, hosts());
    expect(remoteTree(report)).toEqual([['m', 'acme/net/google', '1.7.0', 'download']]);
    expect(gitHost.requests).toEqual(['/acme/net/archive/v1.0.0.tar.gz']);
  });

  it('without module_hosts nothing is fetched from the git host', async () => {
    const report = await scanRemote({ 'main.tf': call('github.com/acme/net//modules/x?ref=v1.0.0') });
    expect(unresolved(report)).toEqual([expect.stringContaining('github.com is not an allowed module host')]);
    expect(gitHost.requests).toEqual([]);
  });

  it('other git hosts, git::file:// and s3:: are named, never fetched', async () => {
    const report = await scanRemote(
      {
        'main.tf':
          call('git::https://git.example.com/acme/net.git?ref=v1', null, 'a') +
          call(`git::file://${repo.dir}?ref=v1.0.0`, null, 'b') +
          call('s3::https://s3.amazonaws.com/bucket/net.zip', null, 'c'),
      },
      ops('module_hosts = { "git.example.com" = "" }\n'),
    );
    expect(unresolved(report)).toEqual([
      expect.stringContaining('only github.com and gitlab.com are downloaded'),
      expect.stringContaining('file:// sources name files on the machine that runs init'),
      expect.stringContaining('"s3::" sources are not fetched'),
    ]);
  });
});
