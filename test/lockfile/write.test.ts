/**
 * The lock-file writer against the files terraform itself writes: `terraform providers lock
 * -fs-mirror=DIR -platform=...` over a filesystem mirror of fake providers (offline), then the same
 * entries built independently (tfguard's combined constraints from a scan, `h1:` hashes of the
 * mirror's zips) must give the same bytes.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { formatLockFile, hashZip, lockFileHeader } from '../../src/lockfile';
import type { LockEntryData } from '../../src/lockfile';
import { scanPath } from '../../src/scan';
import { describeWithTerraform } from '../support/external';
import { fullSource, runTerraform, withMirror, writeTree } from '../support/terraform';
import type { Mirror, ProviderPackage } from '../support/terraform';

const PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64'];

/** Sources whose order differs between comparing whole strings and comparing each part. */
const PROVIDERS: { name: string; source: string; version: string; constraint?: string }[] = [
  { name: 'aws', source: 'hashicorp/aws', version: '5.9.0', constraint: '>= 5.1, ~> 5.0' },
  { name: 'nul', source: 'hashicorp/null', version: '3.2.2' },
  { name: 'zed', source: 'ex.io/acme/zed', version: '1.0.0', constraint: '1.0.0' },
  { name: 'zed2', source: 'ex.io.zz/acme/zed', version: '2.0.0-beta1', constraint: '2.0.0-beta1' },
  { name: 'b', source: 'acme/b', version: '0.1.0', constraint: '>= 0.1' },
  { name: 'a', source: 'acme-b/a', version: '1.2.3', constraint: '~> 1.2, != 1.2.1' },
];

function packagesOf(): ProviderPackage[] {
  return PROVIDERS.flatMap((p) =>
    PLATFORMS.map((platform) => ({
      source: p.source,
      version: p.version,
      platform,
      files: [
        {
          name: `terraform-provider-${p.source.split('/').pop() as string}_v${p.version}`,
          data: `#!/bin/sh\n# ${p.source} ${p.version} ${platform}\nexit 1\n`,
          mode: 0o755,
        },
      ],
    })),
  );
}

function configTf(): string {
  const lines = PROVIDERS.map(
    (p) =>
      `    ${p.name} = { source = "${p.source}"${p.constraint === undefined ? '' : `, version = "${p.constraint}"`} }`,
  );
  return `terraform {\n  required_providers {\n${lines.join('\n')}\n  }\n}\n`;
}

describe('formatLockFile', () => {
  it('writes the header, and an empty lock file as only the header', () => {
    expect(formatLockFile([])).toBe(lockFileHeader('terraform'));
    expect(lockFileHeader('opentofu')).toBe(
      '# This file is maintained automatically by "tofu init".\n# Manual edits may be lost in future updates.\n',
    );
  });

  it('leaves out empty constraints and hashes, dedupes and sorts hashes, orders by address parts', () => {
    const text = formatLockFile([
      { source: 'registry.terraform.io/hashicorp/null', version: '3.2.2', constraints: '', hashes: [] },
      {
        source: 'registry.terraform.io/acme/b',
        version: '0.1.0',
        constraints: '>= 0.1.0',
        hashes: ['zh:bb', 'h1:aa', 'zh:bb', 'h1:Ab'],
      },
      { source: 'registry.terraform.io/acme-b/a', version: '1.0.0', constraints: null, hashes: ['h1:x'] },
    ]);
    expect(text).toBe(
      lockFileHeader('terraform') +
        '\nprovider "registry.terraform.io/acme/b" {\n  version     = "0.1.0"\n  constraints = ">= 0.1.0"\n' +
        '  hashes = [\n    "h1:Ab",\n    "h1:aa",\n    "zh:bb",\n  ]\n}\n' +
        '\nprovider "registry.terraform.io/acme-b/a" {\n  version = "1.0.0"\n  hashes = [\n    "h1:x",\n  ]\n}\n' +
        '\nprovider "registry.terraform.io/hashicorp/null" {\n  version = "3.2.2"\n}\n',
    );
  });

  it('refuses two entries for one provider', () => {
    const e: LockEntryData = {
      source: 'registry.terraform.io/a/b',
      version: '1.0.0',
      constraints: null,
      hashes: [],
    };
    expect(() => formatLockFile([e, e])).toThrow(/two lock entries/);
  });
});

describeWithTerraform('formatLockFile against terraform providers lock', () => {
  let mirror: Mirror;
  let work: string;

  beforeAll(async () => {
    mirror = await withMirror(packagesOf());
    work = path.join(mirror.dir, 'work');
    await writeTree(work, { 'main.tf': configTf() });
    const r = await runTerraform(
      [
        'providers',
        'lock',
        `-fs-mirror=${mirror.mirrorDir}`,
        ...PLATFORMS.map((p) => `-platform=${p}`),
        '-no-color',
      ],
      work,
      mirror.env,
    );
    if (r.code !== 0) throw new Error(`terraform providers lock failed:\n${r.output}`);
  }, 120_000);

  afterAll(async () => {
    await mirror?.cleanup();
  });

  it('gives the bytes terraform wrote from the constraints tfguard combines and the packages it hashes', async () => {
    const written = await fs.readFile(path.join(work, '.terraform.lock.hcl'), 'utf8');
    const report = await scanPath(work);
    const root = report.roots.find((r) => r.path === '.');
    expect(root).toBeDefined();
    const entries: LockEntryData[] = [];
    // Shuffled on purpose: the writer sorts.
    for (const p of [...PROVIDERS].reverse()) {
      const source = fullSource(p.source);
      const constraints = root?.providers.find((rp) => rp.source === source)?.constraints ?? null;
      const hashes: string[] = [];
      for (const platform of PLATFORMS) {
        const zip = mirror.packagePath({ source: p.source, version: p.version, platform });
        hashes.push((await hashZip(zip)).h1);
      }
      entries.push({ source, version: p.version, constraints, hashes: [...hashes, ...hashes].reverse() });
    }
    expect(formatLockFile(entries)).toBe(written);
  });
});
