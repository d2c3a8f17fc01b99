/**
 * Reads every deployment declaration of an archive: which files hold them, parsing them (YAML with
 * js-yaml, HCL with tfguard's parser) and handing each to its pure reader. Nothing is run.
 */
import type { LoadedArchive } from '../../archive';
import { compareUtf8, dirname } from '../../archive';
import type { BlockSpec, HclBody, HclParser, ParseResult } from '../../hcl';
import { CONFIG_FILE, RepositoryFiles } from '../repository-files';
import { inToolDirectory } from '../files';
import { isAtlantisFile, readAtlantis } from './atlantis';
import { isAtmosConfig, isAtmosManifest, readAtmosConfig, readAtmosManifest } from './atmos';
import type { AtmosLayout } from './atmos';
import { isDiggerFile, readDigger } from './digger';
import type { DiggerCandidates } from './digger';
import { isEnv0File, readEnv0 } from './env0';
import {
  isTerramateFile,
  mayDeclareResources,
  mayDeclareStack,
  readCdktf,
  readDeclaringResources,
  readTerramate,
  readTerramateText,
  RESOURCE_PROJECTION,
  TERRAMATE_PROJECTION,
} from './hcl-readers';
import { isSpaceliftFile, readSpacelift } from './spacelift';
import { isLegacyStackFile, isStackComponentFile, STACK_PROJECTION } from './stacks';
import type { TerraformStack } from './stacks';
import type { Declarations, DeclaredRoot, DeclarationProblem, IndirectCall } from './types';
import {
  imported,
  mayGenerateHcl,
  mayImport,
  readImports,
  readGenerateBlocks,
  readGenerateBlocksText,
  terramateGeneration,
  TERRAMATE_GENERATE_PROJECTION,
} from './terramate-generate';
import type { TerramateGenerateFile } from './terramate-generate';
import { isLocalModuleSource, isOutsideArchive, resolveLocalTarget } from '../../addrs';

export type * from './types';
export type { TerraformStack } from './stacks';
export { stackModuleBody, isStackComponentFile } from './stacks';
export { isAtlantisFile } from './atlantis';
export { isDiggerFile } from './digger';
export { isSpaceliftFile } from './spacelift';
export { isEnv0File } from './env0';
export { isAtmosConfig } from './atmos';

export interface ReadDeclarations extends Declarations {
  /** Terraform Stacks found (directories with component files). */
  stacks: TerraformStack[];
}

/**
 * Which readers may concern a file, by its name alone: configuration files (resources that declare
 * roots; CDKTF's synthesized `cdk.tf.json`), YAML files (Atlantis, Digger, Spacelift, env0, Atmos
 * and its manifests), other HCL and JSON files (Terramate, Terraform Stacks), or none: no reader
 * reads any other file. No predicate of the other kinds matches a configuration file's name.
 */
function kindByName(name: string): 'config' | 'yaml' | 'other' | null {
  if (CONFIG_FILE.test(name)) return 'config';
  if (name.endsWith('.yaml') || name.endsWith('.yml')) return 'yaml';
  if (name.endsWith('.hcl') || name.endsWith('.json') || name.endsWith('.tm')) return 'other';
  return null;
}

function text(archive: LoadedArchive, path: string): string {
  return (archive.files.get(path) as Buffer).toString('utf8');
}

/**
 * Whether `readDeclarations` reads the same from `path` holding `after` as holding `before` (with
 * the module loader's parse result of each): true for a file it does not read (no reader's name),
 * and for a configuration file, which it reads only to look for resources declaring roots (the
 * last branch below), when neither version may declare any. Mirrors the reading below.
 */
export function declarationsUnchanged(
  path: string,
  before: Buffer,
  after: Buffer,
  parsedBefore: ParseResult | undefined,
  parsedAfter: ParseResult | undefined,
): boolean {
  if (inToolDirectory(path)) return true;
  const otherReader =
    isAtlantisFile(path) ||
    isDiggerFile(path) ||
    isSpaceliftFile(path) ||
    isEnv0File(path) ||
    isAtmosConfig(path) ||
    isTerramateFile(path) ||
    isStackComponentFile(path) ||
    isLegacyStackFile(path) ||
    // Atmos stack manifests: YAML files under the layout's stacks directory.
    /\.ya?ml$/.test(path);
  if (otherReader) return false;
  if (!CONFIG_FILE.test(path)) return true;
  return !mayDeclareResources(before, parsedBefore) && !mayDeclareResources(after, parsedAfter);
}

export async function readDeclarations(
  archive: LoadedArchive,
  parser: Pick<HclParser, 'extract'>,
  signal?: AbortSignal,
  /** The module loader's parse results, when it has parsed the configuration files already. */
  loaded?: ReadonlyMap<string, ParseResult>,
  /** The archive's files by name, when the caller has them. */
  files?: RepositoryFiles,
): Promise<ReadDeclarations> {
  const roots: DeclaredRoot[] = [];
  const problems: DeclarationProblem[] = [];
  const emptyGlobs: Declarations['emptyGlobs'] = [];
  const legacyStackFiles: Declarations['legacyStackFiles'] = [];
  const completeLists: Declarations['completeLists'] = [];

  const index = files ?? new RepositoryFiles(archive);
  let candidates: DiggerCandidates | undefined;
  const diggerCandidates = (): DiggerCandidates =>
    (candidates ??= {
      terraform: [...index.terraformDirs].sort(compareUtf8),
      terragrunt: [...index.terragruntDirs].sort(compareUtf8),
    });

  const parse = async (path: string, spec: BlockSpec): Promise<ParseResult | null> => {
    signal?.throwIfAborted();
    try {
      return await parser.extract(path, archive.files.get(path) as Buffer, spec, { signal });
    } catch (err) {
      if (signal?.aborted) throw err;
      return null;
    }
  };

  const terramateProjection: BlockSpec = {
    blocks: { ...TERRAMATE_PROJECTION.blocks, ...TERRAMATE_GENERATE_PROJECTION },
  };
  const generateFiles: TerramateGenerateFile[] = [];
  const terramateImports: { dir: string; source: string }[] = [];
  const indirectCalls: IndirectCall[] = [];
  const atmosLayouts: AtmosLayout[] = [];
  const stackFiles = new Map<string, string[]>();
  const yamlPaths: string[] = [];
  const cdktfPaths: string[] = [];
  for (const { path, name } of index.sorted) {
    const kind = kindByName(name);
    if (kind === null) continue;
    if (kind === 'yaml') yamlPaths.push(path);
    if (kind === 'config') {
      if (name === 'cdk.tf.json') cdktfPaths.push(path);
      // Parse errors of configuration files are the module loader's to report.
      if (!mayDeclareResources(archive.files.get(path) as Buffer, loaded?.get(path))) continue;
      const r = await parse(path, RESOURCE_PROJECTION);
      if (r !== null && r.ok) roots.push(...readDeclaringResources(path, r.file.body));
    } else if (isAtlantisFile(path)) {
      const r = readAtlantis({ path, text: text(archive, path) });
      roots.push(...r.roots);
      problems.push(...r.problems);
      if (r.complete) completeLists.push({ tool: 'Atlantis', file: path, count: r.roots.length });
    } else if (isDiggerFile(path)) {
      const r = readDigger({ path, text: text(archive, path) }, diggerCandidates());
      roots.push(...r.roots);
      problems.push(...r.problems);
      emptyGlobs.push(...r.emptyGlobs);
      // Digger plans and applies its projects only, listed or generated.
      if (r.roots.length > 0) completeLists.push({ tool: 'Digger', file: path, count: r.roots.length });
    } else if (isSpaceliftFile(path)) {
      const r = readSpacelift({ path, text: text(archive, path) });
      roots.push(...r.roots);
      problems.push(...r.problems);
    } else if (isEnv0File(path)) {
      const r = readEnv0({ path, text: text(archive, path) });
      roots.push(...r.roots);
      problems.push(...r.problems);
    } else if (isAtmosConfig(path)) {
      const layout = readAtmosConfig(
        { path, text: text(archive, path) },
        (d) => index.isDir(d),
        (f) => index.isFile(f),
        problems,
      );
      if (layout !== null) atmosLayouts.push(layout);
    } else if (isTerramateFile(path)) {
      const source = text(archive, path);
      const stack = mayDeclareStack(source);
      const generates = mayGenerateHcl(source);
      if (!stack && !generates && !mayImport(source)) continue;
      const r = await parse(path, terramateProjection);
      const ok = r !== null && r.ok;
      if (ok) terramateImports.push(...readImports(path, r.file.body));
      if (stack) roots.push(...(ok ? readTerramate(path, r.file.body) : readTerramateText(path, source)));
      if (generates) {
        const dir = dirname(path) || '.';
        generateFiles.push(
          ok ? readGenerateBlocks(path, dir, r.file.body) : readGenerateBlocksText(path, dir, source),
        );
      }
    } else if (isStackComponentFile(path)) {
      const dir = dirname(path) || '.';
      const list = stackFiles.get(dir) ?? [];
      list.push(path);
      stackFiles.set(dir, list);
    } else if (isLegacyStackFile(path)) {
      legacyStackFiles.push({ file: path, line: 1 });
      // Terraform ignores the file, but its components are what the author means to run: modules
      // called by the Stack, not roots of their own.
      const r = await parse(path, STACK_PROJECTION);
      if (r !== null && r.ok) indirectCalls.push(...legacyComponentCalls(path, r.file.body));
    }
  }
  for (const layout of atmosLayouts) {
    for (const path of yamlPaths) {
      if (!isAtmosManifest(layout, path)) continue;
      const r = readAtmosManifest(layout, { path, text: text(archive, path) });
      roots.push(...r.roots);
      problems.push(...r.problems);
    }
  }
  roots.push(...readCdktf(cdktfPaths));

  const stacks: TerraformStack[] = [];
  for (const [dir, files] of [...stackFiles].sort(([a], [b]) => compareUtf8(a, b))) {
    const stack: TerraformStack = { dir, files: [], errors: [] };
    for (const path of files) {
      const r = await parse(path, STACK_PROJECTION);
      if (r !== null && r.ok) stack.files.push({ path, body: r.file.body });
      else {
        stack.errors.push(
          r === null
            ? { path, line: 1, column: 1, message: 'could not be parsed' }
            : r.ok
              ? { path, line: 1, column: 1, message: 'could not be parsed' }
              : { path, line: r.error.line, column: r.error.column, message: r.error.message },
        );
      }
    }
    stacks.push(stack);
    const first = stack.files
      .map((f) => ({ f, b: f.body.blocks.find((b) => b.type === 'component') }))
      .find((x) => x.b !== undefined);
    const count = stack.files.reduce(
      (n, f: { body: HclBody }) => n + f.body.blocks.filter((b) => b.type === 'component').length,
      0,
    );
    roots.push({
      tool: 'Terraform Stacks',
      dir,
      written: dir,
      location:
        first === undefined
          ? { file: files[0] as string, line: 1 }
          : { file: first.f.path, line: (first.b as { line: number }).line },
      label: `Stack component configuration (${count} component${count === 1 ? '' : 's'})`,
    });
  }

  const terramate = terramateGeneration(
    roots,
    [...generateFiles, ...imported(terramateImports, generateFiles)],
    (p) => index.isFile(p),
  );
  indirectCalls.push(...terramate.calls);

  const byLocation = (a: { location: { file: string; line: number } }, b: typeof a): number =>
    compareUtf8(a.location.file, b.location.file) || a.location.line - b.location.line;
  return {
    roots: roots.sort((a, b) => byLocation(a, b) || compareUtf8(a.dir, b.dir)),
    problems: problems.sort(byLocation),
    emptyGlobs: emptyGlobs.sort(byLocation),
    legacyStackFiles,
    completeLists,
    indirectCalls: indirectCalls.sort(byLocation),
    terramateGenerated: terramate.generated,
    stacks,
  };
}

/** The local `component` sources of a Stacks beta file, as calls from its directory. */
function legacyComponentCalls(path: string, body: HclBody): IndirectCall[] {
  const dir = dirname(path) || '.';
  const out: IndirectCall[] = [];
  for (const b of body.blocks) {
    if (b.type !== 'component') continue;
    const src = b.body.attributes.find((a) => a.name === 'source');
    if (src === undefined || typeof src.value !== 'string' || !isLocalModuleSource(src.value)) continue;
    const target = resolveLocalTarget(dir, src.value);
    if (isOutsideArchive(target)) continue;
    out.push({
      target,
      written: src.value,
      location: { file: path, line: src.line },
      via: `component "${b.labels[0] ?? ''}" of the Terraform Stacks beta file ${path}`,
    });
  }
  return out;
}
