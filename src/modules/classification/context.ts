/**
 * The context every signal reads, built once per archive: maps from the repository signals
 * (Terragrunt units, test runs), the module-library aggregates and the README index.
 */
import type { ModuleInfo } from '../types';
import type { ClassificationContext, ClassifyInput, Subject } from './types';
import { libraryIndex } from './library';
import { readmeIndex } from './readme';
import { TEST_SEGMENTS, segments } from './paths';

/** Provider blocks that configure something: not empty aliased proxy blocks (an empty default
 * block, `provider "x" {}`, is a configuration read from the environment). */
export function configuredProviders(m: ModuleInfo): string[] {
  return m.providerConfigs
    .filter((c) => c.configured === true || c.alias === null)
    .map((c) => (c.alias === null ? c.name : `${c.name}.${c.alias}`));
}

export function subjectOf(m: ModuleInfo): Subject {
  return { module: m, path: m.path, segments: segments(m.path), configured: configuredProviders(m) };
}

/** Builds the shared context; `isFragment` reads `fragments`, which the caller fills. */
export function buildContext(input: ClassifyInput, fragments: ReadonlySet<string>): ClassificationContext {
  const { modules, callers, signals } = input;
  const unitByDir = new Map(signals.units.map((u) => [u.dir, u]));
  const unitTemplateByDir = new Map(signals.unitTemplates.map((u) => [u.dir, u]));
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
  const declaredByDir = new Map<string, string>();
  for (const r of signals.declarations.roots) {
    if (declaredByDir.has(r.dir)) continue;
    declaredByDir.set(r.dir, `declared by ${r.tool}: ${r.location.file}:${r.location.line} ${r.label}`);
  }
  const indirectCallers = new Map<string, string>();
  for (const c of signals.declarations.indirectCalls) {
    if (!indirectCallers.has(c.target))
      indirectCallers.set(c.target, `${c.via} (${c.location.file}:${c.location.line})`);
  }
  const list = signals.declarations.completeLists[0];
  const completeList =
    list === undefined
      ? null
      : `${list.file} lists the ${list.count} ${list.count === 1 ? 'directory' : 'directories'} ${list.tool} deploys`;
  let repoDeploysNothing = signals.units.length === 0 && declaredByDir.size === 0;
  for (const m of modules.values()) {
    if (m.backend !== null || m.lockFile !== null) repoDeploysNothing = false;
  }
  const library = libraryIndex(modules, callers, repoDeploysNothing);
  const readme = readmeIndex(signals);
  return {
    ...input,
    unitByDir,
    unitTemplateByDir,
    unitsBySource,
    helperRuns,
    declaredByDir,
    indirectCallers,
    completeList,
    repoDeploysNothing,
    isFragment: (path) => fragments.has(path),
    libraryEvidence: (path) => library.evidence(path),
    readmeEvidence: (path) => readme.evidence(path),
  };
}
