/**
 * One tree for every input: a directory after a real `terraform get` and a tarball
 * of that same directory (packed by the system's `tar`, `.terraform/` and all) give the same report.
 * The directory reader takes `.terraform/modules/` (the installed copies and their `modules.json`)
 * exactly as the archive carries it, so the remote modules resolve from the installed copies, with
 * no network, in both.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../../src/report/types';
import { scanBytes, scanPath } from '../../src/scan';
import { describeWithTerraform } from '../support/external';
import { gitRepo } from '../support/git';
import type { GitRepo } from '../support/git';
import { requiredProvidersTf, runTerraform, writeTree } from '../support/terraform';

let work: string;
let net: GitRepo;
let base: GitRepo;

const call = (name: string, source: string): string => `module "${name}" {\n  source = "${source}"\n}\n`;

/** The report without what describes the input itself: its name, identity, format and file count
 * (the tarball also holds the `.git` of the installed git clones, which a directory read skips), and
 * the wording that names the input's kind ("the archive's top directory" / "the scanned
 * directory itself"). */
function content(report: Report): unknown {
  const { source, ...rest } = report;
  return {
    ...rest,
    configFiles: source.configFiles,
    modules: rest.modules.map((m) => ({
      ...m,
      kindReason: m.kindReason
        .replace("the archive's top directory, and nothing in the archive calls it", 'TOP')
        .replace('the scanned directory itself, and nothing in it calls it', 'TOP'),
    })),
  };
}

describeWithTerraform('a directory after terraform get reads .terraform/modules as its tarball does', () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'tfguard-installed-dir-'));
    base = await gitRepo({
      'v2.0.0': {
        'main.tf': requiredProvidersTf({ random: { source: 'hashicorp/random', version: '>= 3.5, < 4.0' } }),
      },
    });
    net = await gitRepo({
      'v1.0.0': {
        'modules/x/main.tf':
          requiredProvidersTf({ aws: { source: 'hashicorp/aws', version: '>= 5.10' } }) +
          call('y', '../y') +
          call('base', `git::file://${base.dir}?ref=v2.0.0`),
        'modules/y/main.tf': 'resource "tls_private_key" "k" {\n  algorithm = "ED25519"\n}\n',
      },
    });
  });

  afterAll(async () => {
    for (const d of [work, net?.dir, base?.dir]) if (d) await rm(d, { recursive: true, force: true });
  });

  it('gives the same report, with every remote module resolved from its installed copy', async () => {
    const dir = join(work, 'live');
    await writeTree(dir, {
      // The root's random cap excludes what the nested remote module needs: only a tree that read
      // the installed copies sees the conflict.
      'main.tf':
        requiredProvidersTf({
          aws: { source: 'hashicorp/aws', version: '~> 5.0' },
          random: { source: 'hashicorp/random', version: '~> 3.4.0' },
        }) + call('net', `git::file://${net.dir}//modules/x?ref=v1.0.0`),
    });
    const get = await runTerraform(['get', '-no-color'], dir);
    expect(get.output).toContain('Downloading');
    expect(get.code).toBe(0);
    const manifest = JSON.parse(await readFile(join(dir, '.terraform/modules/modules.json'), 'utf8')) as {
      Modules: { Key: string }[];
    };
    expect(manifest.Modules.map((m) => m.Key).sort()).toEqual(['', 'net', 'net.base', 'net.y']);

    const tgz = join(work, 'live.tgz');
    const packed = spawnSync('tar', ['-C', dir, '-czf', tgz, '.']);
    expect(packed.status).toBe(0);

    const fromDir = await scanPath(dir);
    const fromTar = await scanBytes('live.tgz', await readFile(tgz));
    expect(fromDir.source.format).toBe('directory');
    expect(fromTar.source.format).toBe('tar.gz');

    const tree = (r: Report): unknown =>
      r.roots[0]?.remoteModuleTree?.map((m) => [m.key, m.origin, m.unresolved ?? null]);
    expect(tree(fromDir)).toEqual([
      ['net', 'archive', null],
      ['net.y', 'archive', null],
      ['net.base', 'archive', null],
    ]);
    expect(fromDir.findings.filter((f) => f.ruleId === 'module-unresolved')).toEqual([]);
    expect(
      fromDir.findings
        .filter((f) => f.ruleId === 'incompatible-constraints')
        .map((f) => [f.file, f.message.includes('remote module "net.base"')]),
    ).toEqual([['main.tf', true]]);
    expect(content(fromDir)).toEqual(content(fromTar));
  }, 120_000);
});
