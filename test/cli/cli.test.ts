import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cli } from '../support/cli';
import { makeTarGz } from '../support/archive';
import { readLockFile, terraformInit, withMirror } from '../support/terraform';
import { describeWithTerraform } from '../support/external';
import { startRegistry } from '../support/registry-server';
import type { Report } from '../../src/report/types';
import { fakeH1, lockText } from '../support/lock-fixtures';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const DEMO = path.join(ROOT, 'examples/platform-demo.tar.gz');

let tmp: string;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-cli-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('tfguard scan', () => {
  it('exits 1 with findings at or above the default fail-on (error)', async () => {
    const r = await cli(['scan', DEMO]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('shared-module-upper-bound');
  });

  it('exits 0 with --fail-on never and prints JSON with --format json', async () => {
    const r = await cli(['scan', DEMO, '--format', 'json', '--fail-on', 'never']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.schemaVersion).toBe(1);
    expect(report.findings.length).toBeGreaterThan(0);
  });

  it('exits 0 on a clean configuration', async () => {
    const dir = path.join(tmp, 'clean');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(
      path.join(dir, 'main.tf'),
      `terraform {
  required_version = ">= 1.6"
  required_providers {
    random = {
      source  = "hashicorp/random"
      version = "~> 3.6"
    }
  }
}
resource "random_pet" "x" {}
`,
    );
    await fs.writeFile(
      path.join(dir, '.terraform.lock.hcl'),
      `provider "registry.terraform.io/hashicorp/random" {
  version     = "3.6.3"
  constraints = "~> 3.6"
  hashes = [
    "h1:Fnaec9vA8sZ8BXVlN3Xn9Jz3zghSETIKg7ch8oXhxno=",
    "zh:04ceb65210251339f07cd4611885d242cd4d0c7306e86dda9785396807c00451",
  ]
}
`,
    );
    const r = await cli(['scan', dir, '--fail-on', 'notice']);
    expect(r.stdout).toContain('0 errors, 0 warnings, 0 notices');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('writes the report to --output and nothing to stdout', async () => {
    const out = path.join(tmp, 'report.sarif');
    const r = await cli(['scan', DEMO, '--format', 'sarif', '--output', out, '--fail-on', 'never']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const log = JSON.parse(await fs.readFile(out, 'utf8'));
    expect(log.version).toBe('2.1.0');
  });

  it('applies --config FILE (severity override changes the exit code)', async () => {
    const archive = path.join(tmp, 'one.tar.gz');
    await fs.writeFile(
      archive,
      await makeTarGz({
        'main.tf': `terraform {
  required_version = ">= 1.6"
  required_providers {
    random = {
      source  = "hashicorp/random"
      version = ">= 3.0"
    }
  }
}
`,
      }),
    );
    expect((await cli(['scan', archive])).code).toBe(1);
    const config = path.join(tmp, 'relaxed.hcl');
    await fs.writeFile(config, 'rule "root-module-unbounded" {\n  severity = "warning"\n}\n');
    const r = await cli(['scan', archive, '--config', config]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('warning');
  });

  it.each([
    [['scan'], /exactly one/],
    [['scan', DEMO, '--format', 'yaml'], /--format must be one of/],
    [['scan', DEMO, '--fail-on', 'fatal'], /--fail-on must be one of/],
    [['scan', DEMO, '--bogus'], /unknown option --bogus for scan/],
    [['frobnicate'], /unknown command/],
    [[], /missing command/],
  ])('usage error %j exits 2 with a message on stderr and nothing on stdout', async (argv, message) => {
    const r = await cli(argv as string[]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });

  it('exits 2 for a missing path, a corrupt archive and a bad --config', async () => {
    const missing = await cli(['scan', path.join(tmp, 'nope.tar.gz')]);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/nope\.tar\.gz/);

    const corrupt = path.join(tmp, 'corrupt.tar.gz');
    const good = await fs.readFile(DEMO);
    await fs.writeFile(corrupt, good.subarray(0, Math.floor(good.length / 2)));
    const c = await cli(['scan', corrupt]);
    expect(c.code).toBe(2);
    expect(c.stdout).toBe('');
    expect(c.stderr).not.toBe('');

    const badConfig = path.join(tmp, 'bad.hcl');
    await fs.writeFile(badConfig, 'rule "no-such-rule" {\n  severity = "warning"\n}\n');
    const b = await cli(['scan', DEMO, '--config', badConfig]);
    expect(b.code).toBe(2);
    expect(b.stdout).toBe('');
    expect(b.stderr).toMatch(/bad\.hcl:1: unknown rule id "no-such-rule"/);
  });

  it('writes GitLab Code Quality JSON with --format codequality; the exit code still follows --fail-on', async () => {
    const out = path.join(tmp, 'gl-code-quality-report.json');
    const r = await cli(['scan', DEMO, '--format', 'codequality', '--output', out]);
    expect([r.code, r.stdout, r.stderr]).toEqual([1, '', '']);
    const issues = JSON.parse(await fs.readFile(out, 'utf8'));
    const json = JSON.parse((await cli(['scan', DEMO, '--format', 'json'])).stdout);
    expect(issues.map((i: { check_name: string }) => i.check_name)).toEqual(
      json.findings.map((f: { ruleId: string }) => f.ruleId),
    );
    expect((await cli(['scan', DEMO, '--format', 'codequality', '--fail-on', 'never'])).code).toBe(0);
    const bad = await cli(['scan', DEMO, '--format', 'gitlab']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--format must be one of text, json, sarif, markdown, codequality');
  });

  it('colours text only on a TTY', async () => {
    expect((await cli(['scan', DEMO])).stdout).not.toContain('\u001b[');
    expect((await cli(['scan', DEMO], true)).stdout).toContain('\u001b[');
    expect((await cli(['scan', DEMO, '--no-color'], true)).stdout).not.toContain('\u001b[');
  });
});

describe('tfguard scan --remote-modules', () => {
  const MAIN = 'module "kms" {\n  source  = "acme/kms/aws"\n  version = "~> 2.2"\n}\n';

  it('asks nothing without the flag, resolves with it, and caches in --cache-dir', async () => {
    const registry = await startRegistry({
      modules: [
        {
          namespace: 'acme',
          name: 'kms',
          system: 'aws',
          versions: [{ version: '2.2.1', root: { providers: [{ name: 'random', version: '>= 3.1' }] } }],
        },
      ],
    });
    try {
      const dir = path.join(tmp, 'remote');
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'main.tf'), MAIN);
      const ops = path.join(tmp, 'ops.hcl');
      await fs.writeFile(ops, `registry_hosts = { "registry.terraform.io" = "${registry.url}" }\n`);
      const cache = path.join(tmp, 'remote-cache');
      const json = ['--format', 'json', '--fail-on', 'never', '--config', ops];

      const off = JSON.parse((await cli(['scan', dir, ...json])).stdout) as Report;
      expect(registry.requests).toEqual([]);
      expect(off.findings.filter((f) => f.ruleId === 'module-unresolved').map((f) => f.note)).toEqual([
        expect.stringContaining('Scan with --remote-modules'),
      ]);

      const on = await cli(['scan', dir, ...json, '--remote-modules', '--cache-dir', cache]);
      expect(on.code).toBe(0);
      const report = JSON.parse(on.stdout) as Report;
      expect(report.roots[0]?.remoteModuleTree?.map((m) => [m.key, m.resolvedVersion, m.origin])).toEqual([
        ['kms', '2.2.1', 'metadata'],
      ]);
      expect(report.findings.filter((f) => f.ruleId === 'module-unresolved')).toEqual([]);
      const cached = await fs.readdir(path.join(cache, 'remote-modules', 'v1', 'versions'));
      expect(cached).toEqual([expect.stringMatching(/^[0-9a-f]{64}\.json$/)]);

      registry.requests.length = 0;
      const again = await cli(['scan', dir, ...json, '--remote-modules', '--cache-dir', cache]);
      expect(registry.requests).toEqual([]);
      expect(JSON.parse(again.stdout)).toEqual(report);
    } finally {
      await registry.close();
    }
  });

  it('--cache-dir without --remote-modules is a usage error', async () => {
    const r = await cli(['scan', DEMO, '--cache-dir', tmp]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--cache-dir is used only with --remote-modules');
  });
});

describe('tfguard fix --remote-modules', () => {
  // The root gets hashicorp/random only through the registry module; the lock also holds an entry
  // for hashicorp/null, which nothing requires. Only a tree that resolved the module can call that
  // entry stale: without the module, it may be what the module needs.
  const MAIN =
    'terraform {\n  required_version = ">= 1.5"\n}\n\n' +
    'module "kms" {\n  source  = "acme/kms/aws"\n  version = "~> 2.2"\n}\n';
  const LOCK = lockText([
    { source: 'registry.terraform.io/hashicorp/null', version: '3.2.2', hashes: [fakeH1('null')] },
    {
      source: 'registry.terraform.io/hashicorp/random',
      version: '3.6.0',
      constraints: '>= 3.1.0',
      hashes: [fakeH1('random')],
    },
  ]);

  it('resolves remote modules as scan does, for the fixes and for what remains', async () => {
    const registry = await startRegistry({
      modules: [
        {
          namespace: 'acme',
          name: 'kms',
          system: 'aws',
          versions: [{ version: '2.2.1', root: { providers: [{ name: 'random', version: '>= 3.1' }] } }],
        },
      ],
    });
    try {
      const dir = path.join(tmp, 'fix-remote');
      await fs.mkdir(dir, { recursive: true });
      await fs.writeFile(path.join(dir, 'main.tf'), MAIN);
      await fs.writeFile(path.join(dir, '.terraform.lock.hcl'), LOCK);
      const ops = path.join(tmp, 'fix-ops.hcl');
      await fs.writeFile(ops, `registry_hosts = { "registry.terraform.io" = "${registry.url}" }\n`);
      const cache = path.join(tmp, 'fix-remote-cache');
      const common = ['--config', ops, '--fail-on', 'never', '--rule', 'lock-provider-stale'];

      const off = await cli(['fix', dir, '--dry-run', ...common]);
      expect(registry.requests).toEqual([]);
      expect([off.code, off.stdout]).toEqual([0, '']);
      expect(off.stderr).toContain('tfguard fix: would fix 0 findings in 0 files');

      const dry = await cli(['fix', dir, '--dry-run', ...common, '--remote-modules', '--cache-dir', cache]);
      expect(dry.code).toBe(0);
      expect(registry.requests.length).toBeGreaterThan(0);
      expect(dry.stderr).toContain('tfguard fix: would fix 1 finding in 1 file');
      expect(dry.stdout).toContain('-provider "registry.terraform.io/hashicorp/null" {');
      expect(dry.stdout).not.toContain('-provider "registry.terraform.io/hashicorp/random" {');

      // In place: the rescan of what remains resolves the module too (nothing is left to a person).
      const fixed = await cli(['fix', dir, ...common, '--remote-modules', '--cache-dir', cache]);
      expect(fixed.code).toBe(0);
      expect(fixed.stdout).toContain('tfguard fix: fixed 1 finding in 1 file');
      expect(fixed.stdout).not.toContain('still needs a person');
      const lock = await fs.readFile(path.join(dir, '.terraform.lock.hcl'), 'utf8');
      expect(lock).not.toContain('hashicorp/null');
      expect(lock).toContain('provider "registry.terraform.io/hashicorp/random" {');
    } finally {
      await registry.close();
    }
  });

  it('--cache-dir without --remote-modules is a usage error', async () => {
    const r = await cli(['fix', tmp, '--cache-dir', tmp]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--cache-dir is used only with --remote-modules');
  });
});

describe('TFGUARD_DOCS_URL', () => {
  async function withDocsUrl<T>(value: string | undefined, work: () => Promise<T>): Promise<T> {
    const saved = process.env.TFGUARD_DOCS_URL;
    if (value === undefined) delete process.env.TFGUARD_DOCS_URL;
    else process.env.TFGUARD_DOCS_URL = value;
    try {
      return await work();
    } finally {
      if (saved === undefined) delete process.env.TFGUARD_DOCS_URL;
      else process.env.TFGUARD_DOCS_URL = saved;
    }
  }
  const helpUris = (sarif: string): string[] =>
    JSON.parse(sarif).runs[0].tool.driver.rules.map((r: { helpUri: string }) => r.helpUri);

  it('moves the SARIF rule links; unset, they point at this version of the project docs', async () => {
    const moved = await withDocsUrl('https://wiki.example.com/tfguard/', () =>
      cli(['scan', DEMO, '--format', 'sarif']),
    );
    expect(moved.code).toBe(1);
    expect(helpUris(moved.stdout)).toContain('https://wiki.example.com/tfguard/rules/lock-missing.md');
    const plain = await withDocsUrl(undefined, () => cli(['scan', DEMO, '--format', 'sarif']));
    expect(helpUris(plain.stdout)).toContain(
      'https://github.com/tfguard/tfguard/blob/v0.1.0/docs/rules/lock-missing.md',
    );
  });

  it('must be an absolute http(s) URL (exit 2, the variable named)', async () => {
    for (const bad of ['docs/', 'file:///srv/docs', 'ftp://example.com/docs']) {
      const r = await withDocsUrl(bad, () => cli(['scan', DEMO, '--format', 'sarif']));
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr).toContain(
        `environment variable TFGUARD_DOCS_URL must be an absolute http(s) URL, got ${JSON.stringify(bad)}`,
      );
    }
  });
});

describeWithTerraform('tfguard hash against terraform init', () => {
  it('prints the h1: terraform records and the zh: of the zip, for packed and unpacked packages', async () => {
    const files = (type: string, version: string) => [
      { name: `terraform-provider-${type}_v${version}`, data: '#!/bin/sh\nexit 1\n', mode: 0o755 },
      { name: 'README.md', data: `${type} provider\n` },
      { name: 'licenses/LICENSE.txt', data: 'MIT\n' },
    ];
    const packed = { source: 'example/demo', version: '1.2.3', files: files('demo', '1.2.3') };
    const unpacked = {
      source: 'example/other',
      version: '0.1.0',
      files: files('other', '0.1.0'),
      layout: 'unpacked' as const,
    };
    const mirror = await withMirror([packed, unpacked]);
    try {
      const work = path.join(mirror.dir, 'work');
      await fs.mkdir(work);
      await fs.writeFile(
        path.join(work, 'main.tf'),
        'terraform {\n  required_providers {\n    demo = { source = "example/demo" }\n    other = { source = "example/other" }\n  }\n}\n',
      );
      const init = await terraformInit(work, mirror);
      expect(init.stderr + init.stdout).not.toMatch(/Error/);
      expect(init.code).toBe(0);
      const lock = readLockFile(work);
      const zip = await fs.readFile(mirror.packagePath(packed));
      const zh = `zh:${createHash('sha256').update(zip).digest('hex')}`;

      const p = await cli(['hash', mirror.packagePath(packed)]);
      expect(p.code).toBe(0);
      const [h1, zhOut] = p.stdout.trim().split('\n');
      expect(lock.get('registry.terraform.io/example/demo')?.hashes).toContain(h1);
      expect(zhOut).toBe(zh);

      const u = await cli(['hash', mirror.packagePath(unpacked)]);
      expect(u.code).toBe(0);
      expect(u.stdout.trim().split('\n')).toHaveLength(1);
      expect(lock.get('registry.terraform.io/example/other')?.hashes).toContain(u.stdout.trim());
    } finally {
      await mirror.cleanup();
    }
  });
});

describe('tfguard hash', () => {
  it('exits 2 for a corrupt zip, a missing path and bad usage', async () => {
    const bad = path.join(tmp, 'broken.zip');
    await fs.writeFile(bad, Buffer.from('PK\u0003\u0004 this is not a zip'));
    for (const argv of [
      ['hash', bad],
      ['hash', path.join(tmp, 'absent.zip')],
      ['hash'],
      ['hash', 'a', 'b'],
    ]) {
      const r = await cli(argv);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toBe('');
    }
  });
});

describe('tfguard as a process', () => {
  it('sets the exit code and keeps stdout clean on errors', async () => {
    const entry = path.join(ROOT, 'src/cli/entry.ts');
    const ok = await run(process.execPath, ['--import', 'tsx', entry, 'rules'], { cwd: ROOT });
    expect(ok.stdout).toContain('shared-module-upper-bound');
    const bad = await run(process.execPath, ['--import', 'tsx', entry, 'scan', '/definitely/missing'], {
      cwd: ROOT,
    }).then(
      () => ({ code: 0, stdout: 'unexpected success', stderr: '' }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/missing/);
  });
});
