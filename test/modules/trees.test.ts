import { afterAll, describe, expect, test } from '@jest/globals';
import { readArchiveBytes } from '../../src/archive';
import type { ModuleCall, ModuleInfo } from '../../src/modules';
import { detectEngine } from '../../src/modules';
import { buildRootTree, combineConstraints, moduleCycles } from '../../src/modules/tree';
import { makeTarGz } from '../support/archive';
import { BASE_CONFIG, closeParser, load, moduleAt } from '../support/modules';
import { withoutRanges } from '../support/ranges';

afterAll(closeParser);

const req = (name: string, source: string, version?: string) =>
  `terraform {\n  required_providers {\n    ${name} = { source = "${source}"${version ? `, version = "${version}"` : ''} }\n  }\n}\n`;

describe('module kinds', () => {
  test('each rule of the order, with its reason', async () => {
    const loaded = await load(
      {
        // (1) settings globs win over everything, roots before shared
        'pinned/root/main.tf': 'module "x" {\n  source = "../shared"\n}\n',
        'pinned/shared/main.tf': 'terraform {\n  backend "s3" {}\n}\n',
        'pinned/both/main.tf': '',
        // (2) called by another module of the archive → shared, even with a backend
        'app/main.tf': 'module "lib" {\n  source = "./lib"\n}\n',
        'app/lib/main.tf': 'terraform {\n  backend "s3" {}\n}\n',
        // (3) lock file, backend/cloud, root path segments
        'locked/main.tf': 'resource "null_resource" "x" {}\n',
        'locked/.terraform.lock.hcl': '',
        'withcloud/main.tf': 'terraform {\n  cloud {}\n}\n',
        'envs/dev/main.tf': 'resource "null_resource" "x" {}\n',
        'modules/examples/demo/main.tf': '',
        // (4) a "modules" path segment → shared (weak)
        'modules/net/main.tf': 'resource "null_resource" "x" {}\n',
        // (5) declares nothing and nothing calls it → fragment (weak)
        'tools/main.tf': '',
        // (6) called by nothing → root (weak)
        'tool2/main.tf': 'resource "null_resource" "x" {}\n',
        // a module calling itself is not "called by another module"
        'selfish/main.tf': 'module "me" {\n  source = "./"\n}\n',
      },
      { roots: ['pinned/root', 'pinned/both'], shared: ['pinned/**'] },
    );
    const kinds = Object.fromEntries(
      loaded.modules.map((m) => [m.path, [m.kind, m.kindReason, m.kindEvidence]]),
    );
    expect(kinds).toEqual({
      app: ['root', 'not called by any module in the archive', 'weak'],
      'app/lib': ['shared', 'called by module "app" (module.lib)', 'strong'],
      'envs/dev': ['root', 'its path has a "envs" directory', 'strong'],
      locked: ['root', 'has a dependency lock file (locked/.terraform.lock.hcl)', 'strong'],
      'modules/examples/demo': ['example', 'its path has an "examples" directory', 'strong'],
      'modules/net': ['shared', 'its path has a "modules" directory', 'weak'],
      'pinned/both': ['root', 'matches the roots pattern "pinned/both" of the settings', 'strong'],
      'pinned/root': ['root', 'matches the roots pattern "pinned/root" of the settings', 'strong'],
      'pinned/shared': ['shared', 'matches the shared pattern "pinned/**" of the settings', 'strong'],
      selfish: ['root', 'not called by any module in the archive', 'weak'],
      tool2: ['root', 'not called by any module in the archive', 'weak'],
      tools: [
        'fragment',
        'declares no resources, data sources, module calls or providers, and nothing calls it',
        'weak',
      ],
      withcloud: ['root', 'has a cloud block', 'strong'],
    });
    expect(moduleAt(loaded, 'locked').lockFile).toBe('locked/.terraform.lock.hcl');
    expect(moduleAt(loaded, 'tools').lockFile).toBeNull();
    expect(loaded.roots.map((r) => [r.root, r.kind])).toEqual([
      ['app', 'root'],
      ['envs/dev', 'root'],
      ['locked', 'root'],
      ['modules/examples/demo', 'example'],
      ['pinned/both', 'root'],
      ['pinned/root', 'root'],
      ['selfish', 'root'],
      ['tool2', 'root'],
      ['withcloud', 'root'],
    ]);
  });

  test('backend marks a root when nothing calls it; a top directory called by examples is shared', async () => {
    const loaded = await load({
      'main.tf': 'terraform {\n  backend "s3" {}\n}\n',
      'stack/main.tf': 'terraform {\n  backend "s3" {}\n}\n',
      'examples/complete/main.tf': 'module "this" {\n  source = "../../"\n}\n',
    });
    expect(moduleAt(loaded, '.')).toMatchObject({
      kind: 'shared',
      kindReason: 'called by module "examples/complete" (module.this)',
    });
    expect(moduleAt(loaded, 'stack')).toMatchObject({ kind: 'root', kindReason: 'has a backend "s3" block' });
  });
});

describe('root trees', () => {
  test('depth-first call order, each module once, contributions once per module', async () => {
    const loaded = await load({
      'live/main.tf':
        req('aws', 'hashicorp/aws', '~> 5.0') +
        'module "b" {\n  source = "../modules/b"\n}\nmodule "a" {\n  source = "../modules/a"\n}\nmodule "b2" {\n  source = "../modules/b"\n}\n' +
        'module "reg" {\n  source  = "acme/x/aws"\n  version = "1.0.0"\n}\n',
      'modules/a/main.tf': req('aws', 'hashicorp/aws', '>= 4.0') + 'module "c" {\n  source = "./c"\n}\n',
      'modules/a/c/main.tf': req('aws', 'hashicorp/aws', '>= 5.2') + 'resource "random_id" "r" {}\n',
      'modules/b/main.tf': req('aws', 'hashicorp/aws', '>= 4.0') + 'module "c" {\n  source = "../a/c"\n}\n',
    });
    expect(loaded.roots).toHaveLength(1);
    const tree = loaded.roots[0];
    expect(tree?.root).toBe('live');
    expect(tree?.modules).toEqual(['live', 'modules/b', 'modules/a/c', 'modules/a']);
    expect(tree?.calls).toEqual([
      { from: 'live', to: 'modules/b', name: 'b' },
      { from: 'modules/b', to: 'modules/a/c', name: 'c' },
      { from: 'live', to: 'modules/a', name: 'a' },
      { from: 'modules/a', to: 'modules/a/c', name: 'c' },
      { from: 'live', to: 'modules/b', name: 'b2' },
    ]);
    expect(tree?.remoteCalls).toEqual([
      { module: 'live', name: 'reg', source: 'acme/x/aws', version: '1.0.0' },
    ]);
    expect(withoutRanges(tree?.providers)).toEqual([
      {
        source: 'registry.terraform.io/hashicorp/aws',
        constraints: '>= 4.0.0, ~> 5.0, >= 5.2.0',
        contributions: [
          { module: 'live', constraints: '~> 5.0', location: { file: 'live/main.tf', line: 3 } },
          { module: 'modules/b', constraints: '>= 4.0', location: { file: 'modules/b/main.tf', line: 3 } },
          {
            module: 'modules/a/c',
            constraints: '>= 5.2',
            location: { file: 'modules/a/c/main.tf', line: 3 },
          },
          { module: 'modules/a', constraints: '>= 4.0', location: { file: 'modules/a/main.tf', line: 3 } },
        ],
      },
      { source: 'registry.terraform.io/hashicorp/random', constraints: '', contributions: [] },
    ]);
  });

  test('an invalid constraint makes the combined constraint null; provider block versions count', async () => {
    const loaded = await load({
      'main.tf':
        req('aws', 'hashicorp/aws', '>= banana') +
        'provider "google" {\n  version = "~> 4.0"\n}\nmodule "m" {\n  source = "./m"\n}\n',
      'm/main.tf': req('google', 'hashicorp/google', '>= 4.1'),
    });
    const tree = loaded.roots[0];
    expect(withoutRanges(tree?.providers)).toEqual([
      {
        source: 'registry.terraform.io/hashicorp/aws',
        constraints: null,
        contributions: [{ module: '.', constraints: '>= banana', location: { file: 'main.tf', line: 3 } }],
      },
      {
        source: 'registry.terraform.io/hashicorp/google',
        constraints: '~> 4.0, >= 4.1.0',
        contributions: [
          { module: '.', constraints: '~> 4.0', location: { file: 'main.tf', line: 7 } },
          { module: 'm', constraints: '>= 4.1', location: { file: 'm/main.tf', line: 3 } },
        ],
      },
    ]);
  });

  test('cycles are reported on the call that closes them and do not loop', async () => {
    const loaded = await load({
      'envs/prod/main.tf': 'module "a" {\n  source = "../../modules/a"\n}\n',
      'modules/a/main.tf': 'module "b" {\n  source = "../b"\n}\n',
      'modules/b/main.tf': 'module "back" {\n  source = "../a"\n}\nmodule "self" {\n  source = "./"\n}\n',
      // a loop nothing else calls is still found
      'modules/x/main.tf': 'module "y" {\n  source = "../y"\n}\n',
      'modules/y/main.tf': 'module "x" {\n  source = "../x"\n}\n',
    });
    expect(withoutRanges(loaded.diagnostics)).toEqual([
      {
        kind: 'module-cycle',
        module: 'modules/b',
        cycle: ['modules/a', 'modules/b', 'modules/a'],
        location: { file: 'modules/b/main.tf', line: 1 },
      },
      {
        kind: 'module-cycle',
        module: 'modules/b',
        cycle: ['modules/b', 'modules/b'],
        location: { file: 'modules/b/main.tf', line: 4 },
      },
      {
        kind: 'module-cycle',
        module: 'modules/y',
        cycle: ['modules/x', 'modules/y', 'modules/x'],
        location: { file: 'modules/y/main.tf', line: 1 },
      },
    ]);
    const tree = loaded.roots.find((r) => r.root === 'envs/prod');
    expect(tree?.modules).toEqual(['envs/prod', 'modules/a', 'modules/b']);
    expect(tree?.calls).toHaveLength(4);
  });

  test('a long chain of local calls does not exhaust the stack', () => {
    // Built directly (parsing 20 000 files would only slow the test down): a recursive walk
    // overflows the call stack at this depth.
    const depth = 20_000;
    const modules = new Map<string, ModuleInfo>();
    for (let i = 0; i <= depth; i++) {
      const path = `m${i}`;
      const call: ModuleCall = {
        name: 'next',
        source: `../m${i + 1}`,
        sourceKind: 'local',
        version: null,
        providers: {},
        target: i < depth ? `m${i + 1}` : 'm0',
        location: { file: `${path}/main.tf`, line: 1 },
      };
      modules.set(path, {
        path,
        files: [`${path}/main.tf`],
        ignoredFiles: [],
        kind: 'shared',
        kindReason: '',
        kindEvidence: 'strong',
        providers: [],
        providerUses: [],
        providerConfigs: [],
        moduleCalls: [call],
        backend: null,
        requiredVersions: [],
        requiredProvidersBlocks: [],
        lockFile: null,
      });
    }
    const tree = buildRootTree('m0', modules, 'terraform');
    expect(tree.modules).toHaveLength(depth + 1);
    expect(tree.calls).toHaveLength(depth + 1);
    const cycles = moduleCycles(modules, ['m0']);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toMatchObject({ kind: 'module-cycle', module: `m${depth}` });
    expect(cycles[0]?.kind === 'module-cycle' && cycles[0].cycle.length).toBe(depth + 2);
  });
});

describe('parse errors', () => {
  test('a broken file is a diagnostic; the rest of its module and all other modules still load', async () => {
    const loaded = await load({
      'main.tf': req('aws', 'hashicorp/aws', '>= 5.0') + 'module "m" {\n  source = "./m"\n}\n',
      'broken.tf': 'resource "aws_instance" "x" {\n  ami = \n',
      'm/main.tf': 'resource "null_resource" "x" {}\n',
      'm/bad.tf.json': '{"resource": ',
    });
    const errors = loaded.diagnostics.filter((d) => d.kind === 'parse-error');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ kind: 'parse-error', module: '.', file: 'broken.tf' });
    expect(errors[1]).toMatchObject({ kind: 'parse-error', module: 'm', file: 'm/bad.tf.json' });
    for (const e of errors) {
      if (e.kind !== 'parse-error') continue;
      expect(e.line).toBeGreaterThanOrEqual(1);
      expect(e.message.length).toBeGreaterThan(0);
    }
    expect(moduleAt(loaded, '.').files).toEqual(['broken.tf', 'main.tf']);
    expect(moduleAt(loaded, '.').providers.map((p) => p.name)).toEqual(['aws']);
    expect(moduleAt(loaded, 'm').providers.map((p) => p.name)).toEqual(['null']);
    expect([...loaded.parsed.keys()].sort()).toEqual(['m/main.tf', 'main.tf']);
    expect(loaded.roots[0]?.modules).toEqual(['.', 'm']);
  });
});

describe('engine detection', () => {
  const archive = async (files: Record<string, string>) =>
    readArchiveBytes('x.tar.gz', await makeTarGz(files));

  test('.tofu files or OpenTofu lock entries mean OpenTofu; explicit settings win', async () => {
    const tf = await archive({
      'main.tf': '',
      '.terraform.lock.hcl': 'provider "registry.terraform.io/hashicorp/aws" {}\n',
    });
    const tofuFile = await archive({ 'main.tf': '', 'mod/extra.tofu': '' });
    const hiddenTofu = await archive({ 'main.tf': '', '.extra.tofu': '' });
    const tofuLock = await archive({
      'live/main.tf': '',
      'live/.terraform.lock.hcl':
        '# comment\nprovider "registry.opentofu.org/hashicorp/aws" {\n  version = "5.0.0"\n}\n',
    });
    expect(detectEngine(tf, BASE_CONFIG)).toBe('terraform');
    expect(detectEngine(hiddenTofu, BASE_CONFIG)).toBe('terraform');
    expect(detectEngine(tofuFile, BASE_CONFIG)).toBe('opentofu');
    expect(detectEngine(tofuLock, BASE_CONFIG)).toBe('opentofu');
    expect(detectEngine(tofuFile, { ...BASE_CONFIG, engine: 'terraform', engineExplicit: true })).toBe(
      'terraform',
    );
    expect(detectEngine(tf, { ...BASE_CONFIG, engine: 'opentofu', engineExplicit: true })).toBe('opentofu');
  });

  test('OpenTofu loading reads .tofu files, and a .tofu file replaces its .tf twin', async () => {
    const loaded = await load({
      'main.tf': req('aws', 'hashicorp/aws', '>= 4.0'),
      'main.tofu': req('aws', 'hashicorp/aws', '>= 5.0'),
      'extra.tofu.json': JSON.stringify({ resource: { null_resource: { x: {} } } }),
    });
    expect(loaded.engine).toBe('opentofu');
    const m = moduleAt(loaded, '.');
    expect(m.files).toEqual(['extra.tofu.json', 'main.tofu']);
    expect(m.ignoredFiles).toEqual(['main.tf']);
    expect(m.providers.map((p) => [p.source, p.constraints])).toEqual([
      ['registry.opentofu.org/hashicorp/aws', '>= 5.0'],
      ['registry.opentofu.org/hashicorp/null', null],
    ]);
  });

  test('tool state directories are not modules and do not decide the engine', async () => {
    const loaded = await load({
      'main.tf': 'module "vpc" {\n  source = "terraform-aws-modules/vpc/aws"\n}\n',
      '.terraform/modules/vpc/main.tf': 'resource "aws_vpc" "v" {}\n',
      '.terraform/modules/vpc/extra.tofu': '',
      'sub/.git/hooks/x.tf': '',
    });
    expect(loaded.engine).toBe('terraform');
    expect(loaded.modules.map((m) => m.path)).toEqual(['.']);
  });

  test('editor leftovers are listed, not loaded', async () => {
    const loaded = await load({
      'main.tf': '',
      '.main.tf': req('aws', 'hashicorp/aws', '= 1.0.0'),
      'main.tf~': req('aws', 'hashicorp/aws', '= 1.0.0'),
      '#main.tf#': req('aws', 'hashicorp/aws', '= 1.0.0'),
    });
    const m = moduleAt(loaded, '.');
    expect(m.files).toEqual(['main.tf']);
    expect(m.ignoredFiles).toEqual(['#main.tf#', '.main.tf', 'main.tf~']);
    expect(m.providers).toEqual([]);
  });
});

describe('combineConstraints (kept per list)', () => {
  test('the same list gives the same answer again; an invalid one null', () => {
    for (let i = 0; i < 2; i++) {
      expect(combineConstraints(['>= 1.2', '< 2.0'])).toBe('>= 1.2.0, < 2.0.0');
      expect(combineConstraints(['< 2.0', '>= 1.2'])).toBe('>= 1.2.0, < 2.0.0');
      expect(combineConstraints(['>= 1.2', 'nonsense'])).toBeNull();
      expect(combineConstraints([])).toBe('');
    }
  });

  test('lists that join to the same text are told apart', () => {
    expect(combineConstraints(['>= 1.0', '< 2.0'])).toBe('>= 1.0.0, < 2.0.0');
    expect(combineConstraints(['>= 1.0\u0000< 2.0'])).toBeNull();
    expect(combineConstraints(['>= 1.0, < 2.0'])).toBe('>= 1.0.0, < 2.0.0');
  });
});
