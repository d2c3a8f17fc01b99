/**
 * What every directory is: root, shared (reusable), example, test or fragment. Real repositories
 * are read as a whole: the settings' globs, Terragrunt units, `terraform test` files, local calls,
 * backends and lock files, provider configurations, wrappers, README usage blocks and the shape of
 * module libraries, strongest signal first. The signal that decided is the module's `kindReason`;
 * `kindEvidence` says whether it is strong enough for findings that depend on the kind to be
 * stated as facts. docs/classification.md describes the algorithm with the real layouts it serves.
 */
import type { KindEvidence, ModuleInfo, ModuleKind } from './types';
import type { ScanConfig } from '../model';
import { compareUtf8, dirname } from '../archive';
import { matchGlob } from './glob';
import type { RepositorySignals } from './repository';
import { cleanRelativePath } from '../addrs';

/** Path segments that mark the working directory of a deployment. */
export const ROOT_SEGMENTS: readonly string[] = ['environments', 'envs', 'live', 'stacks', 'deployments'];
/** Path segments of example configurations. */
export const EXAMPLE_SEGMENTS: readonly string[] = ['examples', 'example', '_examples', 'samples'];
/** Path segments of test configurations (and CI-only configurations). */
export const TEST_SEGMENTS: readonly string[] = [
  'tests',
  'test',
  'e2e-tests',
  'e2e',
  'integration-tests',
  'test-fixtures',
  'fixtures',
  '.github',
  '.gitlab',
  '.circleci',
];
export const SHARED_SEGMENT = 'modules';
export const WRAPPER_SEGMENT = 'wrappers';
/** Files copied into other modules by convention (`mixins/`, `*.mixin.tf`). */
export const MIXIN_SEGMENT = 'mixins';

export interface KindDecision {
  kind: ModuleKind;
  reason: string;
  evidence: KindEvidence;
}

export interface CallerRef {
  caller: string;
  call: string;
}

export interface ClassifyInput {
  modules: ReadonlyMap<string, ModuleInfo>;
  /** Local callers of each module (self-calls excluded). */
  callers: ReadonlyMap<string, readonly CallerRef[]>;
  signals: RepositorySignals;
  config: Pick<ScanConfig, 'roots' | 'shared' | 'examples' | 'tests' | 'fragments'>;
  /** Files that failed to parse and look like templates (`{% … %}`, `{{ … }}`). */
  templateFiles: ReadonlySet<string>;
}

const strong = (kind: ModuleKind, reason: string): KindDecision => ({ kind, reason, evidence: 'strong' });
const weak = (kind: ModuleKind, reason: string): KindDecision => ({ kind, reason, evidence: 'weak' });

function segments(path: string): string[] {
  return path === '.' ? [] : path.split('/');
}

function isAncestor(ancestor: string, path: string): boolean {
  return ancestor === '.' ? path !== '.' : path.startsWith(`${ancestor}/`);
}

function callersText(list: readonly CallerRef[], what = 'module'): string {
  const first = list[0] as CallerRef;
  const more = list.length > 1 ? ` and ${list.length - 1} more` : '';
  return `called by ${what} "${first.caller}" (module.${first.call})${more}`;
}

/** Provider blocks that configure something: not empty aliased proxy blocks (an empty default
 * block, `provider "x" {}`, is a configuration read from the environment). */
function configuredProviders(m: ModuleInfo): string[] {
  return m.providerConfigs
    .filter((c) => c.configured === true || c.alias === null)
    .map((c) => (c.alias === null ? c.name : `${c.name}.${c.alias}`));
}

/** True when the module declares nothing that is deployed or called. */
function declaresNothing(m: ModuleInfo): boolean {
  return (
    m.moduleCalls.length === 0 &&
    m.providerConfigs.length === 0 &&
    m.backend === null &&
    !m.providerUses.some((u) => u.kind === 'resource' || u.kind === 'data' || u.kind === 'ephemeral')
  );
}

/**
 * Module library shape, from README usage blocks: `source = "…//<dir>?ref=…"` names a directory of
 * this repository as a module (matched by its path), or a placeholder (`<<Module Name>>`,
 * `{module}`) says that the directories at that depth are modules.
 */
function readmeModuleEvidence(path: string, signals: RepositorySignals): string | null {
  for (const { readme, source } of signals.readmeSources) {
    if (!isAncestor(readme, path) && readme !== path) continue;
    const rel = readme === '.' ? path : readme === path ? '.' : path.slice(readme.length + 1);
    if (source.startsWith('./') || source.startsWith('../')) continue;
    const scheme = source.indexOf('://');
    const idx = source.indexOf('//', scheme < 0 ? 0 : scheme + 3);
    if (idx < 0) {
      // A registry or git source for the repository itself: the README's own directory.
      if (rel === '.' && /^[\w.-]+\/[\w.-]+\/[\w.-]+$|^(git::|github\.com\/|git@)/.test(source)) {
        return `the README shows it used as a module (source = "${source}")`;
      }
      continue;
    }
    const sub = cleanRelativePath(source.slice(idx + 2).replace(/[?#].*$/, ''));
    if (sub === rel) return `the README shows it used as a module (source = "${source}")`;
    const placeholder = /[<>{}]|\$\{/.test(sub);
    if (placeholder && sub.split('/').length === rel.split('/').length && rel !== '.') {
      return `the README shows the directories at this depth used as modules (source = "${source}")`;
    }
  }
  return null;
}

/**
 * A directory inside a module library: an ancestor directory holds modules that call each other
 * (at least two modules of it are called by other modules of it), and the repository deploys
 * nothing itself (no backend and no lock file anywhere).
 */
function libraryEvidence(m: ModuleInfo, input: ClassifyInput, repoDeploysNothing: boolean): string | null {
  if (!repoDeploysNothing || m.path === '.') return null;
  let dir = dirname(m.path) || '.';
  for (;;) {
    let members = 0;
    let calledWithin = 0;
    for (const other of input.modules.values()) {
      if (other.path === m.path || !isAncestor(dir, other.path)) continue;
      members++;
      const callers = input.callers.get(other.path) ?? [];
      if (callers.some((c) => isAncestor(dir, c.caller))) calledWithin++;
    }
    if (members >= 2 && calledWithin >= 2) {
      return `it sits in the module library "${dir}" (${calledWithin} of its ${members} other modules are called by modules of it) and the repository has no backend or lock file`;
    }
    if (dir === '.') return null;
    dir = dirname(dir) || '.';
  }
}

/** Decides every module's kind. Pure: reads the modules and the signals, returns decisions. */
export function classifyModules(input: ClassifyInput): Map<string, KindDecision> {
  const { modules, callers, signals, config } = input;
  const out = new Map<string, KindDecision>();

  const unitByDir = new Map(signals.units.map((u) => [u.dir, u]));
  const unitsBySource = new Map<string, string[]>();
  for (const u of signals.units) {
    if (u.target === null || u.target === u.dir) continue;
    const list = unitsBySource.get(u.target) ?? [];
    list.push(u.dir);
    unitsBySource.set(u.target, list);
  }
  const helperRuns = new Map<string, { file: string; run: string }>();
  for (const r of signals.testRuns) {
    // A run that calls a directory below a test directory of the tested module is a helper; a run
    // that calls the module itself or one of its submodules tests that module.
    const rel = r.target.startsWith(`${r.module}/`) ? r.target.slice(r.module.length + 1) : r.target;
    const inTestDir = segments(rel).some((s) => TEST_SEGMENTS.includes(s));
    if (inTestDir && !helperRuns.has(r.target)) helperRuns.set(r.target, { file: r.file, run: r.run });
  }
  // Roots declared by deployment tooling (declarations/): the first declaration of a directory.
  const declaredByDir = new Map<string, string>();
  for (const r of signals.declarations.roots) {
    const text = `declared by ${r.tool}: ${r.location.file}:${r.location.line} ${r.label}`;
    if (!declaredByDir.has(r.dir)) declaredByDir.set(r.dir, text);
  }
  const repoDeploysNothing =
    signals.units.length === 0 &&
    declaredByDir.size === 0 &&
    [...modules.values()].every((m) => m.backend === null && m.lockFile === null);

  const decide = (m: ModuleInfo): KindDecision => {
    const path = m.path;
    const segs = segments(path);
    // 1. The settings.
    const glob = (list: readonly string[]): string | undefined => list.find((g) => matchGlob(g, path));
    const g1 = glob(config.roots);
    if (g1 !== undefined) return strong('root', `matches the roots pattern "${g1}" of the settings`);
    const g2 = glob(config.shared);
    if (g2 !== undefined) return strong('shared', `matches the shared pattern "${g2}" of the settings`);
    const g3 = glob(config.examples);
    if (g3 !== undefined) return strong('example', `matches the examples pattern "${g3}" of the settings`);
    const g4 = glob(config.tests);
    if (g4 !== undefined) return strong('test', `matches the tests pattern "${g4}" of the settings`);
    const g5 = glob(config.fragments);
    if (g5 !== undefined) return strong('fragment', `matches the fragments pattern "${g5}" of the settings`);

    // 1b. Declared by deployment tooling (Atlantis, Digger, Spacelift, Terramate, Atmos, HCP
    // Terraform, env0, CDKTF) or a Terraform Stack: where that tooling runs plan and apply.
    const declared = declaredByDir.get(path);
    if (declared !== undefined) return strong('root', declared);

    // 2. Terragrunt.
    const unit = unitByDir.get(path);
    if (unit !== undefined) {
      return strong(
        'root',
        unit.source === null
          ? `Terragrunt unit (${unit.file})`
          : `Terragrunt unit: ${unit.file} runs source "${unit.source}"`,
      );
    }
    const files = m.files;
    const generatedInto = files.map((f) => signals.generateSources.get(f)).filter((x) => x !== undefined);
    if (files.length > 0 && generatedInto.length === files.length) {
      const units = [...new Set(generatedInto.flat())].sort(compareUtf8);
      return strong(
        'fragment',
        `its files are copied into Terragrunt units by generate blocks (${units[0]}${units.length > 1 ? ` and ${units.length - 1} more` : ''})`,
      );
    }
    if (files.length > 0 && files.every((f) => signals.generatedMarkers.has(f))) {
      return strong('fragment', `its files say "Generated by Terragrunt" (a committed generated copy)`);
    }
    if (files.length > 0 && files.every((f) => input.templateFiles.has(f))) {
      return strong('fragment', 'its files are templates ({% … %} / {{ … }}), not Terraform');
    }
    if (
      files.length > 0 &&
      (segs.includes(MIXIN_SEGMENT) || files.every((f) => /\.mixin\.tf(\.json)?$/.test(f)))
    ) {
      return strong('fragment', 'mixin files, copied into the modules that use them');
    }
    if (files.length > 0 && files.every((f) => signals.linkTargets.has(f))) {
      return strong('fragment', 'its files are linked into other directories, not used as a module here');
    }

    // 3. `terraform test` helpers.
    const helper = helperRuns.get(path);
    if (helper !== undefined) return strong('test', `test helper: run "${helper.run}" in ${helper.file}`);

    // 4. Called through a local source (or run by Terragrunt units).
    const units = unitsBySource.get(path);
    if (units !== undefined) {
      return strong(
        'shared',
        `run by Terragrunt unit "${units[0]}"${units.length > 1 ? ` and ${units.length - 1} more` : ''}`,
      );
    }
    const calledBy = (callers.get(path) ?? []).filter((c) => !isFragmentPath(c.caller));
    if (calledBy.length > 0) return strong('shared', callersText(calledBy));

    // 5. A backend or cloud block: where plan/apply run.
    if (m.backend !== null) {
      return strong(
        'root',
        m.backend.kind === 'cloud' ? 'has a cloud block' : `has a backend "${m.backend.type}" block`,
      );
    }

    // 6. Examples and tests by their place in the repository.
    const ex = segs.find((s) => EXAMPLE_SEGMENTS.includes(s));
    if (ex !== undefined) return strong('example', `its path has an "${ex}" directory`);
    const te = segs.find((s) => TEST_SEGMENTS.includes(s));
    if (te !== undefined) return strong('test', `its path has a "${te}" directory`);

    // 7. Wrappers: reusable modules that call another module of the library with for_each.
    const configured = configuredProviders(m);
    if (configured.length === 0) {
      if (segs.includes(WRAPPER_SEGMENT) && m.moduleCalls.some((c) => c.sourceKind === 'local')) {
        return strong(
          'shared',
          `a wrapper: its path has a "${WRAPPER_SEGMENT}" directory and it calls a local module`,
        );
      }
      const up = m.moduleCalls.find(
        (c) => c.sourceKind === 'local' && c.target !== null && isAncestor(c.target, path),
      );
      if (up !== undefined) {
        return strong(
          'shared',
          `a wrapper: it calls the module of a parent directory (module.${up.name}) and configures no provider`,
        );
      }
    }

    // 8. README usage blocks.
    const readme = readmeModuleEvidence(path, signals);
    if (readme !== null && configured.length === 0) return strong('shared', readme);

    // 9. Nothing to deploy (no resources, data sources, calls or provider configurations) and nothing
    // calls it: not a module anyone uses, whatever lock file it keeps.
    const rootSeg = segs.find((s) => ROOT_SEGMENTS.includes(s));
    if (declaresNothing(m) && path !== '.' && !segs.includes(SHARED_SEGMENT) && rootSeg === undefined) {
      return weak(
        'fragment',
        'declares no resources, data sources, module calls or providers, and nothing calls it',
      );
    }

    // 10. A lock file with provider configurations: an initialised deployment.
    if (m.lockFile !== null && configured.length > 0) {
      return strong(
        'root',
        `has a dependency lock file (${m.lockFile}) and configures provider "${configured[0]}"`,
      );
    }
    const library = configured.length === 0 ? libraryEvidence(m, input, repoDeploysNothing) : null;
    if (m.lockFile !== null) {
      if (segs.includes(SHARED_SEGMENT) || library !== null) {
        return weak(
          'shared',
          `has a dependency lock file (${m.lockFile}) but no backend or provider configuration, and ${
            library ?? `its path has a "${SHARED_SEGMENT}" directory`
          }`,
        );
      }
      return strong('root', `has a dependency lock file (${m.lockFile})`);
    }
    if (rootSeg !== undefined) return strong('root', `its path has a "${rootSeg}" directory`);
    // The top directory that nothing calls is where terraform runs when the archive is checked out.
    if (path === '.')
      return strong('root', "the archive's top directory, and nothing in the archive calls it");
    if (configured.length > 0) {
      return weak('root', `configures provider "${configured[0]}" and nothing in the archive calls it`);
    }
    if (library !== null) return weak('shared', library);
    if (segs.includes(SHARED_SEGMENT)) return weak('shared', `its path has a "${SHARED_SEGMENT}" directory`);
    return weak('root', 'not called by any module in the archive');
  };

  // Fragments decided first, so that their calls do not make other modules "called".
  const fragmentPaths = new Set<string>();
  const isFragmentPath = (p: string): boolean => fragmentPaths.has(p);
  const order = [...modules.values()].sort((a, b) => compareUtf8(a.path, b.path));
  for (const m of order) {
    const d = decide(m);
    if (d.kind === 'fragment') fragmentPaths.add(m.path);
  }
  for (const m of order) out.set(m.path, decide(m));
  return out;
}

/** A short label of a kind for messages: "reusable module", "root module", … */
export function kindLabel(kind: ModuleKind): string {
  switch (kind) {
    case 'root':
      return 'root module';
    case 'shared':
      return 'reusable module';
    case 'example':
      return 'example';
    case 'test':
      return 'test configuration';
    case 'fragment':
      return 'fragment';
  }
}
