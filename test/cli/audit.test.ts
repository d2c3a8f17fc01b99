import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { cli } from '../support/cli';
import { makeTarGz } from '../support/archive';

const DEMO = path.resolve(__dirname, '../../examples/platform-demo.tar.gz');

const lock = (version: string) => `provider "registry.terraform.io/hashicorp/random" {
  version     = "${version}"
  constraints = "${version}"
  hashes = [
    "h1:Fnaec9vA8sZ8BXVlN3Xn9Jz3zghSETIKg7ch8oXhxno=",
  ]
}
`;
const root = (constraint: string) => `terraform {
  required_version = ">= 1.6"
  required_providers {
    random = {
      source  = "hashicorp/random"
      version = "${constraint}"
    }
  }
}
`;

let tmp: string;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-audit-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('tfguard audit', () => {
  it('audits a directory of archives, then reports what is new and fixed on the next run', async () => {
    const archives = path.join(tmp, 'archives');
    const store = path.join(tmp, 'store');
    await fs.mkdir(archives);
    await fs.copyFile(DEMO, path.join(archives, 'platform-demo.tar.gz'));
    await fs.writeFile(
      path.join(archives, 'billing.tgz'),
      await makeTarGz({ 'main.tf': root('3.6.0'), '.terraform.lock.hcl': lock('3.6.0') }),
    );
    await fs.writeFile(
      path.join(archives, 'search.tar.gz'),
      await makeTarGz({ 'main.tf': root('>= 3.0'), '.terraform.lock.hcl': lock('3.5.1') }),
    );
    await fs.writeFile(path.join(archives, 'broken.zip'), Buffer.from('not a zip at all'));
    await fs.writeFile(path.join(archives, 'notes.txt'), 'ignored');

    const first = await cli(['audit', archives, '--store', store, '--format', 'json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const s1 = JSON.parse(first.stdout);
    expect(s1.repositories.map((r: { repository: string }) => r.repository)).toEqual([
      'billing',
      'broken',
      'platform-demo',
      'search',
    ]);
    expect(s1.totals).toMatchObject({ repositories: 4, scanned: 3, rejected: 1 });
    const search = s1.repositories.find((r: { repository: string }) => r.repository === 'search');
    expect(search.rules['root-module-unbounded']).toEqual({ severity: 'error', count: 1 });
    const random = s1.providers.find(
      (p: { source: string }) => p.source === 'registry.terraform.io/hashicorp/random',
    );
    expect(random.skew).toBe(true);
    expect(random.versions.map((v: { version: string }) => v.version)).toEqual(['3.6.0', '3.5.1']);

    // search fixes its constraint; billing regresses.
    await fs.writeFile(
      path.join(archives, 'search.tar.gz'),
      await makeTarGz({ 'main.tf': root('~> 3.5'), '.terraform.lock.hcl': lock('3.5.1') }),
    );
    await fs.writeFile(
      path.join(archives, 'billing.tgz'),
      await makeTarGz({ 'main.tf': root('>= 3.6.0'), '.terraform.lock.hcl': lock('3.6.0') }),
    );
    const second = await cli(['audit', archives, '--store', store, '--format', 'json']);
    expect(second.code).toBe(0);
    const s2 = JSON.parse(second.stdout);
    expect(s2.previousRunId).toBe(s1.runId);
    const byName = (s: { repositories: { repository: string }[] }, n: string) =>
      s.repositories.find((r) => r.repository === n) as unknown as {
        new: { ruleId: string }[];
        fixed: { ruleId: string }[];
      };
    expect(byName(s2, 'search').fixed.map((f) => f.ruleId)).toContain('root-module-unbounded');
    expect(byName(s2, 'billing').new.map((f) => f.ruleId)).toContain('root-module-unbounded');

    const md = await cli(['audit', archives, '--store', store]);
    expect(md.stdout).toMatch(/^#/m);
    expect(md.stdout).toContain('platform-demo');
  });

  it('shows a progress bar on a TTY only, on stderr', async () => {
    const archives = path.join(tmp, 'one');
    await fs.mkdir(archives);
    await fs.copyFile(DEMO, path.join(archives, 'demo.tar.gz'));
    const tty = await cli(['audit', archives, '--store', path.join(tmp, 's2')], true);
    expect(tty.code).toBe(0);
    expect(tty.stderr).toContain('1/1 demo');
    expect(tty.stdout).not.toContain('1/1');
  });

  it('exits 2 for an empty or missing directory and bad usage', async () => {
    const empty = path.join(tmp, 'empty');
    await fs.mkdir(empty);
    for (const argv of [
      ['audit', empty],
      ['audit', path.join(tmp, 'absent')],
      ['audit'],
      ['audit', empty, '--format', 'sarif'],
    ]) {
      const r = await cli(argv);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).not.toBe('');
    }
  });
});
