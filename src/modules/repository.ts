/**
 * What the repository around the modules says about them: Terragrunt units (`terragrunt.hcl`
 * with `terraform { source }`, the files their `generate` blocks copy in, `include`d parents),
 * `terraform test` files (`run { module { source } }` helpers), README usage blocks
 * (`source = "…//<dir>"`), files Terragrunt generated and committed, and the targets of symbolic
 * links. Everything is read statically: Terragrunt functions such as `find_in_parent_folders()`
 * and `file()` are recognised by name and resolved against the archive's paths, never run.
 *
 * The classification (classification/) turns these signals into module kinds.
 */
import type { HclParser, BlockSpec } from '../hcl';
import type { HclBlock, HclBody, ParseResult } from '../hcl';
import type { LoadedArchive } from '../archive';
import type { SourceLocation } from '../model';
import { basename, compareUtf8, dirname } from '../archive';
import { inToolDirectory } from './files';
import { classifyModuleSource, isOutsideArchive, resolveLocalTarget } from '../addrs';
import type { ModuleSourceKind } from '../addrs';
import { readDeclarations } from './declarations';
import type { ReadDeclarations } from './declarations';

export const TERRAGRUNT_FILE = 'terragrunt.hcl';
const TEST_FILE_SUFFIXES = ['.tftest.hcl', '.tftest.json'];

/** A `generate` block of a unit (or of a file it includes) whose contents tfguard could read. */
export interface GeneratedFile {
  /** The file name the block writes into the working directory (`provider.tf`). */
  name: string;
  /** The archive file whose content is generated (`file("./common/provider.tf")`), or null when
   * the contents are written inline. */
  from: string | null;
  /** Inline contents (a literal string), when `from` is null. */
  inline: string | null;
  /** The `generate` block. */
  location: SourceLocation;
}

export interface TerragruntUnit {
  /** The unit's directory. */
  dir: string;
  /** `terragrunt.hcl` of the unit. */
  file: string;
  /** `terraform { source = … }` as written; null when the unit names no source (then the unit's
   * own directory is the module, as Terragrunt runs it). */
  source: string | null;
  sourceKind: ModuleSourceKind;
  /** The archive directory a local source points to (`//` joins the package and its subdirectory). */
  target: string | null;
  location: SourceLocation;
  generated: GeneratedFile[];
  /** `remote_state { backend = "s3" }` (of the unit or an included file). */
  backend: { type: string; location: SourceLocation } | null;
  /** Files included with `include { path = … }` that were found in the archive. */
  includes: string[];
}

export interface TestRun {
  /** The `.tftest.hcl` file. */
  file: string;
  /** The module directory the test belongs to (where `terraform test` runs). */
  module: string;
  run: string;
  source: string;
  /** The archive directory the run's module source points to (relative to `module`). */
  target: string;
  location: SourceLocation;
}

export interface RepositorySignals {
  units: TerragruntUnit[];
  testRuns: TestRun[];
  /** Directories holding `.tftest.hcl` files, mapped to the module they test. */
  testedModules: Map<string, string[]>;
  /** Module sources written in README files, with the README's directory. */
  readmeSources: { readme: string; source: string }[];
  /** Configuration files whose first line says Terragrunt generated them. */
  generatedMarkers: Set<string>;
  /** Archive paths that a symbolic link elsewhere in the archive points to. */
  linkTargets: Set<string>;
  /** Files copied into units by `generate` blocks (`from` of every generated file). */
  generateSources: Map<string, string[]>;
  /** Roots declared by deployment tooling, and Terraform Stacks (src/modules/declarations). */
  declarations: ReadDeclarations;
}

const TERRAGRUNT_PROJECTION: BlockSpec = {
  blocks: {
    terraform: { attributes: ['source'] },
    include: { attributes: ['path'] },
    generate: { attributes: ['path', 'contents'] },
    remote_state: { attributes: ['backend'] },
  },
};

const TEST_PROJECTION: BlockSpec = {
  blocks: { run: { blocks: { module: { attributes: ['source'] } } } },
};

/** Directory names that hold `terraform test` files by convention (`-test-directory`). */
const TEST_DIRS = new Set(['tests', 'test', 'e2e-tests', 'e2e', 'integration-tests', 'unit-tests']);

function isTestFile(name: string): boolean {
  return TEST_FILE_SUFFIXES.some((s) => name.endsWith(s));
}

function stringAttr(body: HclBody, name: string): { value: string; line: number } | null {
  const a = body.attributes.find((x) => x.name === name);
  return a !== undefined && typeof a.value === 'string' ? { value: a.value, line: a.line } : null;
}

/** `${fn("arg")}` as the whole value → `arg` (the only call shapes read). */
function singleCallArgument(value: string, fn: string): string | null | undefined {
  const m = new RegExp(`^\\$\\{${fn}\\((?:"((?:[^"\\\\]|\\\\.)*)")?\\)\\}$`).exec(value);
  if (m === null) return undefined;
  return m[1] === undefined ? null : m[1].replace(/\\(.)/g, '$1');
}

/** Terragrunt's `find_in_parent_folders(name)`: the nearest ancestor of `dir` (not `dir`
 * itself) holding `name`; the default name is `terragrunt.hcl` (older Terragrunt) or `root.hcl`. */
function findInParentFolders(dir: string, name: string | null, files: ReadonlySet<string>): string | null {
  const names = name === null ? [TERRAGRUNT_FILE, 'root.hcl'] : [name];
  let d = dir;
  while (d !== '.') {
    d = dirname(d) || '.';
    for (const n of names) {
      const candidate = d === '.' ? n : `${d}/${n}`;
      if (files.has(candidate)) return candidate;
    }
  }
  return null;
}

/** A Terragrunt source split at `//` into the package and the subdirectory, for local paths. */
function localTerragruntTarget(dir: string, source: string): string | null {
  const [pkg = '', ...rest] = source.split('//');
  const sub = rest.join('/');
  const target = resolveLocalTarget(dir, sub === '' ? pkg : `${pkg}/${sub}`);
  return isOutsideArchive(target) ? null : target;
}

function parseOk(result: ParseResult | undefined): HclBody | null {
  return result !== undefined && result.ok ? result.file.body : null;
}

function blocksOf(body: HclBody, type: string): HclBlock[] {
  return body.blocks.filter((b) => b.type === type);
}

/** Reads the repository signals. Files that do not parse are skipped: they are not Terraform
 * configuration, and the module loader reports configuration files that do not parse. */
export async function readRepositorySignals(
  archive: LoadedArchive,
  parser: Pick<HclParser, 'extract'>,
  signal?: AbortSignal,
): Promise<RepositorySignals> {
  const filePaths = new Set<string>();
  for (const e of archive.entries) if (e.type !== 'directory') filePaths.add(e.path);

  const hclFiles: { path: string; spec: BlockSpec }[] = [];
  const readmes: string[] = [];
  const generatedMarkers = new Set<string>();
  for (const [path, content] of archive.files) {
    if (inToolDirectory(path)) continue;
    const name = basename(path);
    if (name === TERRAGRUNT_FILE || (name.endsWith('.hcl') && !name.startsWith('.') && !isTestFile(name))) {
      hclFiles.push({ path, spec: TERRAGRUNT_PROJECTION });
    } else if (isTestFile(name)) {
      hclFiles.push({ path, spec: TEST_PROJECTION });
    } else if (/^readme\.md$/i.test(name)) {
      readmes.push(path);
    } else if (name.endsWith('.tf') || name.endsWith('.tofu')) {
      const head = content.subarray(0, 200).toString('utf8');
      if (/^# Generated by Terragrunt\b/.test(head)) generatedMarkers.add(path);
    }
  }
  hclFiles.sort((a, b) => compareUtf8(a.path, b.path));

  const bodies = new Map<string, HclBody>();
  for (const { path, spec } of hclFiles) {
    signal?.throwIfAborted();
    const content = archive.files.get(path) as Buffer;
    let result: ParseResult | undefined;
    try {
      result = await parser.extract(path, content, spec, { signal });
    } catch (err) {
      if (signal?.aborted) throw err;
      result = undefined;
    }
    const body = parseOk(result);
    if (body !== null) bodies.set(path, body);
  }

  const units: TerragruntUnit[] = [];
  const generateSources = new Map<string, string[]>();
  for (const [path, body] of bodies) {
    if (basename(path) !== TERRAGRUNT_FILE) continue;
    const dir = dirname(path) || '.';
    const unit = readUnit(dir, path, body, bodies, filePaths);
    units.push(unit);
    for (const g of unit.generated) {
      if (g.from === null) continue;
      const list = generateSources.get(g.from) ?? [];
      list.push(unit.dir);
      generateSources.set(g.from, list);
    }
  }

  const testRuns: TestRun[] = [];
  const testedModules = new Map<string, string[]>();
  for (const [path, body] of bodies) {
    if (!isTestFile(basename(path))) continue;
    const dir = dirname(path) || '.';
    // `terraform test` runs in the module directory; test files sit in it or in a test directory
    // below it (`tests/` by default, any `-test-directory`), and run sources are relative to it.
    const module = TEST_DIRS.has(basename(dir)) ? dirname(dir) || '.' : dir;
    const list = testedModules.get(dir) ?? [];
    list.push(module);
    testedModules.set(dir, list);
    for (const run of blocksOf(body, 'run')) {
      for (const mod of blocksOf(run.body, 'module')) {
        const source = stringAttr(mod.body, 'source');
        if (source === null || classifyModuleSource(source.value) !== 'local') continue;
        const target = resolveLocalTarget(module, source.value);
        if (isOutsideArchive(target)) continue;
        testRuns.push({
          file: path,
          module,
          run: run.labels[0] ?? '',
          source: source.value,
          target,
          location: { file: path, line: source.line },
        });
      }
    }
  }

  const readmeSources: { readme: string; source: string }[] = [];
  for (const path of readmes.sort(compareUtf8)) {
    const text = (archive.files.get(path) as Buffer).toString('utf8');
    for (const m of text.matchAll(/^\s*source\s*=\s*"([^"\n]+)"?/gm)) {
      readmeSources.push({ readme: dirname(path) || '.', source: m[1] as string });
    }
  }

  const linkTargets = new Set<string>();
  for (const e of archive.entries) {
    if ((e.type === 'symlink' || e.type === 'hardlink') && e.linkTarget !== undefined) {
      linkTargets.add(e.linkTarget);
    }
  }

  const declarations = await readDeclarations(archive, parser, signal);

  return {
    declarations,
    units: units.sort((a, b) => compareUtf8(a.dir, b.dir)),
    testRuns,
    testedModules,
    readmeSources,
    generatedMarkers,
    linkTargets,
    generateSources,
  };
}

function readUnit(
  dir: string,
  path: string,
  body: HclBody,
  bodies: ReadonlyMap<string, HclBody>,
  files: ReadonlySet<string>,
): TerragruntUnit {
  const includes: string[] = [];
  for (const inc of blocksOf(body, 'include')) {
    const p = stringAttr(inc.body, 'path');
    if (p === null) continue;
    const call = singleCallArgument(p.value, 'find_in_parent_folders');
    const resolved =
      call !== undefined
        ? findInParentFolders(dir, call, files)
        : p.value.includes('${')
          ? null
          : resolveLocalTarget(dir, p.value);
    if (resolved !== null && files.has(resolved)) includes.push(resolved);
  }
  // The unit's own blocks win over included ones (Terragrunt's shallow merge).
  const layers: { file: string; body: HclBody }[] = [{ file: path, body }];
  for (const inc of includes) {
    const b = bodies.get(inc);
    if (b !== undefined) layers.push({ file: inc, body: b });
  }

  let source: { value: string; line: number; file: string } | null = null;
  let backend: TerragruntUnit['backend'] = null;
  const generated = new Map<string, GeneratedFile>();
  for (const layer of layers) {
    const layerDir = dirname(layer.file) || '.';
    for (const tf of blocksOf(layer.body, 'terraform')) {
      const s = stringAttr(tf.body, 'source');
      if (source === null && s !== null) source = { ...s, file: layer.file };
    }
    for (const rs of blocksOf(layer.body, 'remote_state')) {
      const b = stringAttr(rs.body, 'backend');
      if (backend === null && b !== null && !b.value.includes('${')) {
        backend = { type: b.value, location: { file: layer.file, line: b.line } };
      }
    }
    for (const g of blocksOf(layer.body, 'generate')) {
      const name = stringAttr(g.body, 'path');
      const contents = stringAttr(g.body, 'contents');
      if (name === null || contents === null || generated.has(name.value)) continue;
      const location = { file: layer.file, line: g.line };
      const fileArg = singleCallArgument(contents.value, 'file');
      if (fileArg !== undefined && fileArg !== null) {
        // `file()` is relative to the configuration that calls it; fall back to the unit's directory.
        const from = [resolveLocalTarget(layerDir, fileArg), resolveLocalTarget(dir, fileArg)].find((p) =>
          files.has(p),
        );
        if (from !== undefined) generated.set(name.value, { name: name.value, from, inline: null, location });
      } else if (!contents.value.includes('${')) {
        generated.set(name.value, { name: name.value, from: null, inline: contents.value, location });
      }
    }
  }

  const sourceKind = source === null ? 'local' : classifyModuleSource(source.value);
  const target =
    source === null ? dir : sourceKind === 'local' ? localTerragruntTarget(dir, source.value) : null;
  return {
    dir,
    file: path,
    source: source?.value ?? null,
    sourceKind:
      source !== null && source.value.includes('${') && sourceKind === 'local' ? 'unknown' : sourceKind,
    target,
    location: source === null ? { file: path, line: 1 } : { file: source.file, line: source.line },
    generated: [...generated.values()],
    backend,
    includes,
  };
}
