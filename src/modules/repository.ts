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
import type { Engine, SourceLocation } from '../model';
import { basename, compareUtf8, dirname, inputKind } from '../archive';
import { RepositoryFiles } from './repository-files';
import { inToolDirectory } from './files';
import { classifyModuleSource, isOutsideArchive, resolveLocalTarget } from '../addrs';
import { readUnit } from './terragrunt/unit';
import { mapLimit } from '../util/map-limit';
import type { TerragruntUnit } from './terragrunt/unit';
import { declarationsUnchanged, readDeclarations } from './declarations';
import type { ReadDeclarations } from './declarations';

export const TERRAGRUNT_FILE = 'terragrunt.hcl';
/** Terragrunt Stacks: https://terragrunt.gruntwork.io/docs/features/stacks/ */
export const STACK_FILE = 'terragrunt.stack.hcl';
const TEST_FILE_SUFFIXES = ['.tftest.hcl', '.tftest.json', '.tofutest.hcl', '.tofutest.json'];

export type { GeneratedFile, TerragruntUnit, Unresolved } from './terragrunt/unit';

/** A `terragrunt.stack.hcl`: the units and stacks it generates (into `.terragrunt-stack/`). */
export interface TerragruntStack {
  file: string;
  blocks: {
    type: 'unit' | 'stack';
    name: string;
    source: string | null;
    path: string | null;
    line: number;
  }[];
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
  /** Catalog units: `terragrunt.hcl` files that read `values.*`, templates a `terragrunt.stack.hcl`
   * instantiates, not units deployed where they sit. */
  unitTemplates: TerragruntUnit[];
  stacks: TerragruntStack[];
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
  /** Directories holding a scanner's expected results (`positive_expected_result.json`, KICS's
   * query tests), mapped to that file: the samples beside them are fixtures, not modules. */
  expectedResults: Map<string, string>;
}

export { EXPECTED_RESULT_FILE } from './repository-files';

const HASH = 0x23;

/** How many Terragrunt and test files are handed to the parser at once. */
const HCL_CONCURRENCY = 64;

const TERRAGRUNT_PROJECTION: BlockSpec = {
  blocks: {
    terraform: { attributes: ['source'] },
    include: { attributes: ['path', 'merge_strategy'] },
    locals: { attributes: 'all' },
    generate: { attributes: ['path', 'contents', 'disable'] },
    remote_state: { attributes: ['backend'] },
    unit: { attributes: ['source', 'path'] },
    stack: { attributes: ['source', 'path'] },
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

/**
 * Whether the engine's `test` command reads a test file. Terraform reads `.tftest.hcl` /
 * `.tftest.json` (hashicorp/terraform internal/configs/parser_config_dir.go); OpenTofu (1.8+, with `.tofu` files) also
 * reads `.tofutest.hcl` / `.tofutest.json`, and a `.tofutest` twin at the same path hides the `.tftest`
 * file (opentofu/opentofu internal/configs/parser_config_dir.go, `filterTfPathsWithTofuAlternatives`,
 * which maps `.tftest.hcl` to `.tofutest.hcl` and `.tftest.json` to `.tofutest.json`; the test
 * directory's files and the module's are one list there, but twins share a directory).
 */
export function testFileRead(path: string, engine: Engine, exists: (path: string) => boolean): boolean {
  if (path.endsWith('.tofutest.hcl') || path.endsWith('.tofutest.json')) return engine === 'opentofu';
  if (engine !== 'opentofu') return true;
  const twin = path.replace(/\.tftest\.(hcl|json)$/, '.tofutest.$1');
  return twin === path || !exists(twin);
}

function stringAttr(body: HclBody, name: string): { value: string; line: number } | null {
  const a = body.attributes.find((x) => x.name === name);
  return a !== undefined && typeof a.value === 'string' ? { value: a.value, line: a.line } : null;
}

function parseOk(result: ParseResult | undefined): HclBody | null {
  return result !== undefined && result.ok ? result.file.body : null;
}

function blocksOf(body: HclBody, type: string): HclBlock[] {
  return body.blocks.filter((b) => b.type === type);
}

/** Whether the first lines of a `.tf` / `.tofu` file say Terragrunt generated it. */
function generatedByTerragrunt(content: Buffer): boolean {
  // Only a file whose first byte is `#` can start with the marker (no decoding for the rest).
  return (
    content[0] === HASH && /^# Generated by Terragrunt\b/.test(content.subarray(0, 200).toString('utf8'))
  );
}

/**
 * Whether `readRepositorySignals` reads the same from `after` as from `before`: two archives with
 * the same entries whose files differ only in bytes (`parsedBefore` / `parsedAfter`: the module
 * loader's parse results of each). True when every changed file is one the signals read only for
 * the Terragrunt marker of a configuration file's first line and for resources declaring roots
 * (src/modules/declarations), both reading the same (a lock file: not read at all), in a tree
 * without `terragrunt.hcl` files (a unit may read any file's text). Mirrors the reading below.
 */
export function signalsUnchanged(
  before: LoadedArchive,
  after: LoadedArchive,
  parsedBefore: ReadonlyMap<string, ParseResult>,
  parsedAfter: ReadonlyMap<string, ParseResult>,
): boolean {
  let terragrunt: boolean | undefined;
  for (const [path, content] of after.files) {
    const old = before.files.get(path);
    if (old === content) continue;
    if (old === undefined) return false;
    terragrunt ??= [...after.files.keys()].some((p) => basename(p) === TERRAGRUNT_FILE);
    if (terragrunt) return false;
    if (inToolDirectory(path)) continue;
    const name = basename(path);
    if (name === TERRAGRUNT_FILE || (name.endsWith('.hcl') && !name.startsWith('.') && !isTestFile(name)))
      return false;
    if (isTestFile(name) || /^readme\.md$/i.test(name)) return false;
    if (
      (name.endsWith('.tf') || name.endsWith('.tofu')) &&
      generatedByTerragrunt(old) !== generatedByTerragrunt(content)
    )
      return false;
    if (!declarationsUnchanged(path, old, content, parsedBefore.get(path), parsedAfter.get(path)))
      return false;
  }
  return true;
}

/** Reads the repository signals. Files that do not parse are skipped: they are not Terraform
 * configuration, and the module loader reports configuration files that do not parse. */
export async function readRepositorySignals(
  archive: LoadedArchive,
  parser: Pick<HclParser, 'extract'>,
  signal?: AbortSignal,
  engine: Engine = 'terraform',
  /** The module loader's parse results of the configuration files, when it has them. */
  loaded?: ReadonlyMap<string, ParseResult>,
): Promise<RepositorySignals> {
  const files = new RepositoryFiles(archive);

  const hclFiles: { path: string; spec: BlockSpec }[] = [];
  const readmes: string[] = [];
  const generatedMarkers = new Set<string>();
  for (const { path, name } of files.loaded) {
    if (name.endsWith('.hcl') || name.endsWith('.json')) {
      if (name === TERRAGRUNT_FILE || (name.endsWith('.hcl') && !name.startsWith('.') && !isTestFile(name))) {
        hclFiles.push({ path, spec: TERRAGRUNT_PROJECTION });
      } else if (isTestFile(name)) {
        hclFiles.push({ path, spec: TEST_PROJECTION });
      }
    } else if (name.endsWith('.tf') || name.endsWith('.tofu')) {
      // Only a file whose first byte is `#` can start with the marker (no decoding for the rest).
      const content = archive.files.get(path) as Buffer;
      if (generatedByTerragrunt(content)) generatedMarkers.add(path);
    } else if (/^readme\.md$/i.test(name)) {
      readmes.push(path);
    }
  }
  hclFiles.sort((a, b) => compareUtf8(a.path, b.path));

  // Parsed together (at most HCL_CONCURRENCY at once), so that the values the fast path leaves to
  // hcl2json (`find_in_parent_folders()` calls and the like, in nearly every unit) go to its worker
  // in one batch instead of one round trip per file (src/hcl/parser.ts, `snippetValue`).
  const parsed = await mapLimit(hclFiles, HCL_CONCURRENCY, async ({ path, spec }) => {
    signal?.throwIfAborted();
    const content = archive.files.get(path) as Buffer;
    let result: ParseResult | undefined;
    try {
      result = await parser.extract(path, content, spec, { signal });
      if (
        !result.ok &&
        spec === TERRAGRUNT_PROJECTION &&
        /blocks of type "include" have different numbers/.test(result.error.message)
      ) {
        // Terragrunt accepts a bare `include {}` beside named ones; HCL's JSON rendering does not.
        // Read the bare one as `include "" {}` (same lines) rather than lose the unit.
        const named = content.toString('utf8').replace(/^(\s*include)(\s*\{)/gm, '$1 ""$2');
        result = await parser.extract(path, Buffer.from(named, 'utf8'), spec, { signal });
      }
    } catch (err) {
      if (signal?.aborted) throw err;
      result = undefined;
    }
    return parseOk(result);
  });
  const bodies = new Map<string, HclBody>();
  hclFiles.forEach(({ path }, i) => {
    const body = parsed[i] ?? null;
    if (body !== null) bodies.set(path, body);
  });

  const candidates: TerragruntUnit[] = [];
  const unitTemplates: TerragruntUnit[] = [];
  const stacks: TerragruntStack[] = [];
  const generateSources = new Map<string, string[]>();
  const unitInput = {
    bodies,
    exists: (p: string) => files.isEntryFile(p),
    read: (p: string) => archive.files.get(p)?.toString('utf8') ?? null,
    input: inputKind(archive),
  };
  for (const [path, body] of bodies) {
    if (basename(path) === STACK_FILE) {
      stacks.push(readStack(path, body));
      continue;
    }
    if (basename(path) !== TERRAGRUNT_FILE) continue;
    const dir = dirname(path) || '.';
    const unit = readUnit(dir, path, body, unitInput);
    if (readsValues(archive.files.get(path) as Buffer)) {
      unitTemplates.push(unit);
      continue;
    }
    candidates.push(unit);
  }
  // A `terragrunt.hcl` that other units include (`include { path = find_in_parent_folders() }`) is
  // the root configuration of Terragrunt's older convention, shared by its units, not a unit: it is
  // evaluated only as their include (`path_relative_to_include()` means nothing on its own), and
  // Terragrunt calls running it an anti-pattern
  // (https://terragrunt.gruntwork.io/docs/migrate/migrating-from-root-terragrunt-hcl/).
  const included = new Set(candidates.flatMap((u) => u.includes));
  const units = candidates.filter((u) => !included.has(u.file));
  for (const unit of units) {
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
    if (!isTestFile(basename(path)) || !testFileRead(path, engine, (p) => files.isEntryFile(p))) continue;
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

  const declarations = await readDeclarations(archive, parser, signal, loaded, files);

  return {
    declarations,
    units: units.sort((a, b) => compareUtf8(a.dir, b.dir)),
    unitTemplates: unitTemplates.sort((a, b) => compareUtf8(a.dir, b.dir)),
    stacks,
    testRuns,
    testedModules,
    readmeSources,
    generatedMarkers,
    linkTargets: files.linkTargets,
    generateSources,
    expectedResults: files.expectedResults,
  };
}

const VALUES_DOT = Buffer.from('values.', 'utf8');

/** A catalog unit reads `values.*`, which only a `terragrunt.stack.hcl` `unit` block supplies. */
function readsValues(content: Buffer): boolean {
  // Only a file holding the bytes `values.` can match (no decoding for the others).
  return (
    content.includes(VALUES_DOT) && /(^|[^A-Za-z0-9_.-])values\.[A-Za-z_]/m.test(content.toString('utf8'))
  );
}

function readStack(path: string, body: HclBody): TerragruntStack {
  const blocks: TerragruntStack['blocks'] = [];
  for (const b of body.blocks) {
    if (b.type !== 'unit' && b.type !== 'stack') continue;
    const str = (name: string): string | null => {
      const a = b.body.attributes.find((x) => x.name === name);
      return a !== undefined && typeof a.value === 'string' ? a.value : null;
    };
    blocks.push({
      type: b.type,
      name: b.labels[0] ?? '',
      source: str('source'),
      path: str('path'),
      line: b.line,
    });
  }
  return { file: path, blocks };
}
