/**
 * `tfguard fix` leaves files as they were, on real directories through
 * the CLI: symlinks stay symlinks (the target inside the tree is edited; a link whose reader needs
 * a fix another reader of the same file does not is left to a person), modes are kept (0664,
 * executable bits), nothing under `.terraform/` is edited, and `x.tf` / `x.tofu` twins are edited
 * together. The `--dry-run` patch says the same: `git apply --check` accepts it and, applied to a
 * copy, gives the bytes of the in-place fix (with the links still links). Terraform 1.11 is the
 * oracle for twins: after the fix, `terraform providers` reads the fixed constraint from `x.tf`.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { cli } from '../support/cli';
import { describeWithTerraform } from '../support/external';
import { runTerraform, writeTree } from '../support/terraform';
import { EditPlacer, twinPath } from '../../src/fix';
import type { FileView } from '../../src/fix';
import type { TextEdit } from '../../src/model';

const run = promisify(execFile);

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-files-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A root on strong evidence (a backend) whose requirement has no upper bound. */
const ROOT_MAIN = 'terraform {\n  backend "local" {}\n}\n\nresource "aws_vpc" "x" {}\n';
const VERSIONS = (v: string): string =>
  `terraform {\n  required_providers {\n    aws = {\n      source  = "hashicorp/aws"\n      version = "${v}"\n    }\n  }\n}\n`;

/** What the directory holds: per path, a file's bytes and mode, or a link's target. */
async function snapshot(dir: string, modes = true): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string): Promise<void> => {
    for (const name of (await fs.readdir(path.join(dir, rel))).sort()) {
      if (name === '.git') continue;
      const p = rel === '' ? name : `${rel}/${name}`;
      const st = await fs.lstat(path.join(dir, p));
      if (st.isSymbolicLink()) out[p] = `link -> ${await fs.readlink(path.join(dir, p))}`;
      else if (st.isDirectory()) await walk(p);
      else
        out[p] =
          `${modes ? (st.mode & 0o7777).toString(8) : ''} ${await fs.readFile(path.join(dir, p), 'utf8')}`;
    }
  };
  await walk('');
  return out;
}

/** Copies `dir` (links as links, modes kept) to a fresh directory. */
async function copyTree(dir: string): Promise<string> {
  const to = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-files-copy-'));
  await run('cp', ['-a', `${dir}/.`, to]);
  return to;
}

/**
 * Runs `fix --dry-run` on a copy, checks and applies its patch with git, runs `fix` in place on
 * `tmp`, and expects both trees alike (links, modes, bytes). Returns the in-place run.
 */
async function fixBothWays(): Promise<{ stdout: string; patch: string; dryStderr: string }> {
  const copy = await copyTree(tmp);
  try {
    const dry = await cli(['fix', copy, '--dry-run']);
    const patchFile = path.join(os.tmpdir(), `tfguard-files-${process.pid}.patch`);
    await fs.writeFile(patchFile, dry.stdout);
    if (dry.stdout !== '') {
      await run('git', ['apply', '--check', patchFile], { cwd: copy });
      await run('git', ['apply', patchFile], { cwd: copy });
    }
    await fs.rm(patchFile, { force: true });
    const real = await cli(['fix', tmp]);
    // git apply writes modes as git knows them (644/755), not 0664: the bytes and links must agree.
    expect(await snapshot(copy, false)).toEqual(await snapshot(tmp, false));
    return { stdout: real.stdout, patch: dry.stdout, dryStderr: dry.stderr };
  } finally {
    await fs.rm(copy, { recursive: true, force: true });
  }
}

describe('fix keeps files as they were', () => {
  it('edits the target of a symlinked versions.tf inside the tree; every link stays a link', async () => {
    // Two roots share one versions file through links (a common layout); the file itself sits in
    // a directory with nothing else Terraform reads.
    await writeTree(tmp, {
      'envs/prod/main.tf': ROOT_MAIN,
      'envs/stage/main.tf': ROOT_MAIN,
      'common/versions.tf.shared': VERSIONS('>= 5.1'),
    });
    await fs.symlink('../../common/versions.tf.shared', path.join(tmp, 'envs/prod/versions.tf'));
    await fs.symlink('../../common/versions.tf.shared', path.join(tmp, 'envs/stage/versions.tf'));
    const { patch } = await fixBothWays();
    expect(patch).toContain('+++ b/common/versions.tf.shared');
    expect(patch).not.toContain('envs/prod/versions.tf');
    const after = await snapshot(tmp);
    expect(after['envs/prod/versions.tf']).toBe('link -> ../../common/versions.tf.shared');
    expect(after['envs/stage/versions.tf']).toBe('link -> ../../common/versions.tf.shared');
    expect(after['common/versions.tf.shared']).toBe(`644 ${VERSIONS('~> 5.1')}`);
    // A second run changes nothing.
    const again = await cli(['fix', tmp, '--dry-run']);
    expect(again.stdout).toBe('');
  });

  it('leaves a file two readers need differently fixed to a person, naming both paths', async () => {
    // The link makes a shared module's file part of a root: the root needs a bound, the shared
    // module must not have one. One file cannot say both.
    await writeTree(tmp, {
      'live/main.tf': `${ROOT_MAIN}\nmodule "net" {\n  source = "../modules/net"\n}\n`,
      'modules/net/versions.tf': VERSIONS('>= 5.1'),
      'modules/net/main.tf': 'resource "aws_subnet" "x" {}\n',
    });
    await fs.symlink('../modules/net/versions.tf', path.join(tmp, 'live/versions.tf'));
    const before = await snapshot(tmp);
    const dry = await cli(['fix', tmp, '--dry-run']);
    const real = await cli(['fix', tmp]);
    expect(await snapshot(tmp)).toEqual(before);
    expect(dry.stdout).toBe('');
    expect(real.stdout).toMatch(/still needs a person/);
    expect(real.stdout).toMatch(
      /root-module-unbounded.*modules\/net\/versions\.tf is read as live\/versions\.tf/,
    );
  });

  it('keeps modes: 0664 stays 0664, executable bits stay, whatever the umask', async () => {
    await writeTree(tmp, { 'main.tf': ROOT_MAIN, 'versions.tf': VERSIONS('>= 5.1') });
    await fs.chmod(path.join(tmp, 'versions.tf'), 0o664);
    await fs.chmod(path.join(tmp, 'main.tf'), 0o755);
    const old = process.umask(0o022);
    try {
      await fixBothWays();
    } finally {
      process.umask(old);
    }
    const st = await fs.stat(path.join(tmp, 'versions.tf'));
    expect((st.mode & 0o7777).toString(8)).toBe('664');
    expect(await fs.readFile(path.join(tmp, 'versions.tf'), 'utf8')).toBe(VERSIONS('~> 5.1'));
    await fs.chmod(path.join(tmp, 'versions.tf'), 0o775);
    await fs.writeFile(path.join(tmp, 'versions.tf'), VERSIONS('>= 5.1'));
    await cli(['fix', tmp]);
    expect(((await fs.stat(path.join(tmp, 'versions.tf'))).mode & 0o7777).toString(8)).toBe('775');
  });

  it('rewrites a file with other hard links in place, so every name still reads it', async () => {
    await writeTree(tmp, { 'main.tf': ROOT_MAIN, 'versions.tf': VERSIONS('>= 5.1') });
    await fs.link(path.join(tmp, 'versions.tf'), path.join(tmp, 'versions.tf.orig'));
    await cli(['fix', tmp]);
    const a = await fs.stat(path.join(tmp, 'versions.tf'));
    const b = await fs.stat(path.join(tmp, 'versions.tf.orig'));
    expect(a.ino).toBe(b.ino);
    expect(await fs.readFile(path.join(tmp, 'versions.tf.orig'), 'utf8')).toBe(VERSIONS('~> 5.1'));
  });

  it('never edits under .terraform/: a link into it is neither followed nor replaced', async () => {
    await writeTree(tmp, {
      'main.tf': ROOT_MAIN,
      '.terraform/modules/modules.json': '{"Modules":[{"Key":"","Source":"","Dir":"."}]}',
      '.terraform/versions.tf': VERSIONS('>= 5.1'),
    });
    await fs.symlink('.terraform/versions.tf', path.join(tmp, 'versions.tf'));
    const before = await snapshot(tmp);
    const real = await cli(['fix', tmp]);
    expect(await snapshot(tmp)).toEqual(before);
    expect(real.stdout).toMatch(/still needs a person/);
  });
});

describe('twins are one setting', () => {
  const TWINS = {
    'main.tf': ROOT_MAIN,
    'versions.tf': VERSIONS('>= 5.1'),
    'versions.tofu': VERSIONS('>= 5.1'),
  };

  it('identical versions.tf and versions.tofu stay identical', async () => {
    await writeTree(tmp, TWINS);
    const { patch } = await fixBothWays();
    expect(patch).toContain('+++ b/versions.tf\n');
    expect(patch).toContain('+++ b/versions.tofu\n');
    const after = await snapshot(tmp);
    expect(after['versions.tf']).toBe(`644 ${VERSIONS('~> 5.1')}`);
    expect(after['versions.tofu']).toBe(after['versions.tf']);
    expect((await cli(['fix', tmp, '--dry-run'])).stdout).toBe('');
  });

  it('twins that differ elsewhere get the edit where the lines around it read the same', async () => {
    const tofu = `${VERSIONS('>= 5.1')}\n# OpenTofu only\nterraform {\n  encryption {}\n}\n`;
    await writeTree(tmp, {
      ...TWINS,
      'versions.tofu': tofu,
      'versions.tf.json': '{}\n',
      'versions.tofu.json': '{}\n',
    });
    await fixBothWays();
    const after = await snapshot(tmp);
    expect(after['versions.tf']).toBe(`644 ${VERSIONS('~> 5.1')}`);
    expect(after['versions.tofu']).toBe(`644 ${tofu.replace('>= 5.1', '~> 5.1')}`);
  });

  it('.tf.json and .tofu.json twins are edited together', async () => {
    const json = (v: string): string =>
      `{\n  "terraform": {\n    "required_providers": {\n      "aws": { "source": "hashicorp/aws", "version": "${v}" }\n    }\n  }\n}\n`;
    await writeTree(tmp, {
      'main.tf': ROOT_MAIN,
      'versions.tf.json': json('>= 5.1'),
      'versions.tofu.json': json('>= 5.1'),
    });
    await fixBothWays();
    const after = await snapshot(tmp);
    expect(after['versions.tf.json']).toBe(`644 ${json('~> 5.1')}`);
    expect(after['versions.tofu.json']).toBe(after['versions.tf.json']);
  });

  it('twins that read differently around the edit are left to a person, both untouched', async () => {
    const tf = VERSIONS('>= 5.1').replace(
      'source  = "hashicorp/aws"',
      'source  = "hashicorp/aws" # terraform',
    );
    await writeTree(tmp, { ...TWINS, 'versions.tf': tf });
    const before = await snapshot(tmp);
    const real = await cli(['fix', tmp]);
    expect(await snapshot(tmp)).toEqual(before);
    expect(real.stdout).toMatch(/versions\.tf is the twin of versions\.tofu .*edit both alike/);
  });
});

describe('copies of one template, through the CLI', () => {
  it('are fixed together, or not at all when one copy cannot take the fix', async () => {
    // Three shared modules with the same versions.tf, called by one root each; live/c declares its
    // providers in JSON, which tfguard does not extend, so its module's cap cannot move up: no copy
    // is edited.
    const shared =
      '# Copyright 2026 Example\n#\n# Licensed under the Apache License, Version 2.0\n#\n#\n#\n#\n#\n#\n#\n#\n#\n' +
      'terraform {\n  required_providers {\n    random = {\n      source  = "hashicorp/random"\n      version = "~> 3.4"\n    }\n  }\n}\n';
    const root = (m: string): string =>
      `terraform {\n  backend "local" {}\n}\n\nmodule "m" {\n  source = "../../modules/${m}"\n}\n`;
    const json = '{"terraform": {"required_providers": {}}}\n';
    const files: Record<string, string> = {
      'modules/a/versions.tf': shared,
      'modules/b/versions.tf': shared,
      'modules/c/versions.tf': shared,
      'live/a/main.tf': root('a'),
      'live/b/main.tf': root('b'),
      'live/c/main.tf': root('c'),
      'live/c/versions.tf.json': json,
    };
    await writeTree(tmp, files);
    const before = await snapshot(tmp);
    const held = await cli(['fix', tmp, '--rule', 'shared-module-upper-bound']);
    expect(held.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(held.stdout).toContain(
      'modules/a/versions.tf is one of 3 copies of one file (generated from one template?), and 1 of them would not get this edit (modules/c/versions.tf)',
    );
    expect(await snapshot(tmp)).toEqual(before);
    // Once live/c can take a bound, every copy takes the same edit.
    await fs.rm(path.join(tmp, 'live/c/versions.tf.json'));
    const fixed = await cli(['fix', tmp, '--rule', 'shared-module-upper-bound']);
    expect(fixed.stdout).toMatch(/^tfguard fix: fixed 3 findings in 6 files/);
    const after = await snapshot(tmp);
    for (const m of ['a', 'b', 'c'])
      expect(after[`modules/${m}/versions.tf`]).toBe(`644 ${shared.replace('~> 3.4', '>= 3.4')}`);
  });
});

describeWithTerraform('twins against terraform 1.11', () => {
  it('after the fix terraform reads the fixed constraint from versions.tf', async () => {
    // No backend (terraform providers would ask for init): a root on strong evidence because it
    // calls a local module that nothing else calls.
    const module = VERSIONS('>= 5.1');
    await writeTree(tmp, {
      'main.tf': 'module "net" {\n  source = "./modules/net"\n}\n',
      'versions.tf': VERSIONS('>= 5.1'),
      'versions.tofu': VERSIONS('>= 5.1'),
      'modules/net/versions.tf': module,
    });
    expect((await runTerraform(['get'], tmp)).code).toBe(0);
    const before = await runTerraform(['providers', '-no-color'], tmp);
    expect(before.output).toMatch(/├── provider\[registry\.terraform\.io\/hashicorp\/aws\] >= 5\.1\.0/);
    await cli(['fix', tmp]);
    expect(await fs.readFile(path.join(tmp, 'versions.tofu'), 'utf8')).toBe(VERSIONS('~> 5.1'));
    const after = await runTerraform(['providers', '-no-color'], tmp);
    expect(after.code).toBe(0);
    expect(after.output).toMatch(/├── provider\[registry\.terraform\.io\/hashicorp\/aws\] ~> 5\.1\b/);
    expect((await runTerraform(['fmt', '-check'], tmp)).code).toBe(0);
  }, 60_000);
});

describe('EditPlacer', () => {
  const range = (file: string, start: number, end: number): TextEdit['range'] => ({
    file,
    start: { line: 1, column: start + 1, byte: start },
    end: { line: 1, column: end + 1, byte: end },
  });
  const view = (files: Record<string, string>, links: Record<string, string> = {}): FileView => ({
    entries: [
      ...Object.keys(files).map((p) => ({ path: p, type: 'file' as const, size: 0 })),
      ...Object.entries(links).map(([p, t]) => ({
        path: p,
        type: 'symlink' as const,
        size: 0,
        linkTarget: t,
      })),
    ],
    read: (p) => (files[p] === undefined ? undefined : Buffer.from(files[p] as string)),
  });

  it('never places an edit under .terraform/ or .git/', () => {
    for (const file of ['.terraform/modules/vpc/versions.tf', 'a/.git/x.tf']) {
      const placer = new EditPlacer(view({ [file]: 'version = "~> 5.1"\n' }), new Map());
      const placed = placer.place([{ range: range(file, 11, 17), text: '>= 5.1' }]);
      expect(placed).toEqual({
        ok: false,
        reason: expect.stringMatching(/under \.terraform\/.*never edits/),
      });
    }
  });

  it('a link to a file the tree does not hold is left to a person', () => {
    const placer = new EditPlacer(view({}, { 'versions.tf': '../outside/versions.tf' }), new Map());
    const placed = placer.place([{ range: range('versions.tf', 0, 1), text: 'x' }]);
    expect(placed).toEqual({
      ok: false,
      reason: expect.stringMatching(/symlink to a file outside the scanned tree/),
    });
  });

  it('a twin linked to its twin is one file: one edit', () => {
    const placer = new EditPlacer(view({ 'v.tofu': 'abc\n' }, { 'v.tf': 'v.tofu' }), new Map());
    placer.prepare([[{ range: range('v.tofu', 0, 1), text: 'x' }]]);
    expect(placer.place([{ range: range('v.tofu', 0, 1), text: 'x' }])).toEqual({
      ok: true,
      edits: [{ range: range('v.tofu', 0, 1), text: 'x' }],
    });
  });

  it('an edit whose lines around it occur twice in the twin is not guessed', () => {
    const block = 'a\nb\nc\nd\ne\nf\ng\n';
    const placer = new EditPlacer(view({ 'v.tofu': block, 'v.tf': `${block}${block}` }), new Map());
    const placed = placer.place([{ range: range('v.tofu', 6, 7), text: 'D' }]);
    expect(placed.ok).toBe(false);
  });

  describe('copies of one template stay copies', () => {
    // As cloud-foundation-fabric's 101 versions.tf (tools/versions.py writes them; they differ in
    // a module_name line): an edit of some copies but not others is left to a person.
    const header =
      '# Copyright 2026 Example\n#\n# Licensed under the Apache License, Version 2.0 (the "License");\n#\n#\n#\n#\n#\n#\n#\n#\n#\n';
    const copy = (name: string): string =>
      `${header}terraform {\n  required_providers {\n    aws = {\n      version = "~> 5.1"\n    }\n  }\n  provider_meta "aws" {\n    module_name = "${name}"\n  }\n}\n`;
    const at = copy('a').indexOf('~> 5.1');
    const shortAt = copy('a').replace(header, '').indexOf('~> 5.1');
    let offset = at;
    const edit = (file: string): TextEdit => ({ range: range(file, offset, offset + 6), text: '>= 5.1' });
    it.each([
      ['short files alike by chance are not copies', ['m/a', 'm/b', 'm/c'], ['m/a'], true],
      ['three copies, all edited alike', ['m/a', 'm/b', 'm/c'], ['m/a', 'm/b', 'm/c'], true],
      ['three copies, one left out', ['m/a', 'm/b', 'm/c'], ['m/a', 'm/b'], false],
      ['two files of one name are not a template', ['m/a', 'm/b'], ['m/a'], true],
      ['files that differ in more lines are not copies', ['m/a', 'm/b', 'm/c'], ['m/a'], true],
    ] as const)('%s', (what, dirs, edited, ok) => {
      const files: Record<string, string> = {};
      for (const d of dirs) files[`${d}/versions.tf`] = copy(d);
      if (what.startsWith('short files'))
        for (const d of dirs)
          files[`${d}/versions.tf`] = (files[`${d}/versions.tf`] as string).replace(header, '');
      if (what.startsWith('files that differ'))
        for (const d of dirs.slice(1))
          files[`${d}/versions.tf`] = (files[`${d}/versions.tf`] as string).replace(
            'terraform {',
            '# x\nterraform {\n',
          );
      offset = what.startsWith('short files') ? shortAt : at;
      const placer = new EditPlacer(view(files), new Map());
      placer.prepare(edited.map((d) => [edit(`${d}/versions.tf`)]));
      const placed = placer.place([edit(`${edited[0]}/versions.tf`)]);
      if (ok) expect(placed).toEqual({ ok: true, edits: [edit(`${edited[0]}/versions.tf`)] });
      else
        expect(placed).toEqual({
          ok: false,
          reason:
            'm/a/versions.tf is one of 3 copies of one file (generated from one template?), and 1 of them would not get this edit (m/c/versions.tf): edit the copies together, or their template',
        });
    });
  });

  it.each([
    [
      'a file that says DO NOT EDIT',
      { 'm/versions.tf': '// TERRAMATE: GENERATED AUTOMATICALLY DO NOT EDIT\nversion = "~> 5.1"\n' },
      /m\/versions\.tf says it is generated/,
    ],
    [
      'a file in a module whose other files say they are generated',
      {
        'm/versions.tf': '\nversion = "~> 5.1"\n',
        'm/main.tf': '// This file was automatically generated from a template in ./autogen/main\n',
        'm/outputs.tf': '// This file was automatically generated from a template in ./autogen/main\n',
        'm/moved.tf': '\n',
      },
      /in a module whose files say they are generated \(2 of 3, e\.g\. m\/main\.tf\)/,
    ],
    [
      'a module with one generated file among others',
      {
        'm/versions.tf': '\nversion = "~> 5.1"\n',
        'm/share.tf': '# DO NOT EDIT\n',
        'm/main.tf': '\n',
        'm/x.tf': '\n',
      },
      null,
    ],
  ] as const)('generated files are left to a person: %s', (_what, files, reason) => {
    const at = (files['m/versions.tf'] as string).indexOf('~> 5.1');
    const e: TextEdit = { range: range('m/versions.tf', at, at + 6), text: '>= 5.1' };
    const placer = new EditPlacer(view(files as Record<string, string>), new Map());
    placer.prepare([[e]]);
    const placed = placer.place([e]);
    if (reason === null) expect(placed).toEqual({ ok: true, edits: [e] });
    else expect(placed).toEqual({ ok: false, reason: expect.stringMatching(reason) });
  });

  it('twinPath pairs only configuration names', () => {
    expect(twinPath('a/x.tf')).toBe('a/x.tofu');
    expect(twinPath('a/x.tofu.json')).toBe('a/x.tf.json');
    expect(twinPath('a/x.tf.json')).toBe('a/x.tofu.json');
    expect(twinPath('a/.x.tf')).toBeNull();
    expect(twinPath('a/x.hcl')).toBeNull();
    expect(twinPath('a/.tf')).toBeNull();
  });
});

describe('a symlink that leaves the tree', () => {
  it('stops the fix with a clear error naming it, and nothing is written', async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-files-outside-'));
    try {
      await fs.writeFile(path.join(outside, 'versions.tf'), VERSIONS('>= 5.1'));
      await writeTree(tmp, { 'main.tf': ROOT_MAIN });
      await fs.symlink(path.join(outside, 'versions.tf'), path.join(tmp, 'versions.tf'));
      const before = await snapshot(tmp);
      const real = await cli(['fix', tmp]);
      expect(real.code).toBe(2);
      expect(real.stderr).toMatch(/symlink "versions\.tf" points to .*outside the input directory/);
      expect(await snapshot(tmp)).toEqual(before);
      expect(await fs.readFile(path.join(outside, 'versions.tf'), 'utf8')).toBe(VERSIONS('>= 5.1'));
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });
});
