/**
 * The classification's vocabulary: a decision (kind, reason, evidence), the module being judged
 * (with what every signal reads of it computed once), the context shared by all signals
 * (precomputed once per archive, so that each signal is a few map lookups), and the signal itself.
 */
import type { KindEvidence, ModuleInfo, ModuleKind } from '../types';
import type { InputKind, ScanConfig } from '../../model';
import type { RepositorySignals, TerragruntUnit } from '../repository';

export interface KindDecision {
  kind: ModuleKind;
  reason: string;
  evidence: KindEvidence;
  /** The id of the signal that decided (set by `classifyModules`). */
  signal?: string;
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
  /** What was scanned, as reasons name it ("nothing in the directory calls it"); absent: an archive. */
  input?: InputKind;
}

/** The module being judged, with what several signals read of it computed once. */
export interface Subject {
  module: ModuleInfo;
  path: string;
  /** The path's directory names (`[]` for the archive's top directory). */
  segments: readonly string[];
  /** Provider blocks that configure something (`aws`, `aws.peer`), not empty aliased proxies. */
  configured: readonly string[];
}

/**
 * Everything about the archive that signals read, computed once (context.ts). Lookups only: no
 * signal walks all modules, so classifying n modules costs O(n · depth).
 */
export interface ClassificationContext extends ClassifyInput {
  /** Terragrunt units by their directory. */
  unitByDir: ReadonlyMap<string, TerragruntUnit>;
  /** Terragrunt catalog units (`terragrunt.hcl` reading `values.*`) by their directory. */
  unitTemplateByDir: ReadonlyMap<string, TerragruntUnit>;
  /** Directories run by Terragrunt units (`terraform { source }`), with the units' directories. */
  unitsBySource: ReadonlyMap<string, readonly string[]>;
  /** Directories called by a `run { module { source } }` below a test directory. */
  helperRuns: ReadonlyMap<string, { file: string; run: string }>;
  /** Directories that deployment tooling declares as roots, with the first declaration in words
   * (`declared by Atlantis: atlantis.yaml:5 project "net"`). */
  declaredByDir: ReadonlyMap<string, string>;
  /** Modules called from configuration not loaded as a module (a Stacks beta file's `component`,
   * a `module` block in a Terramate `generate_hcl`), with the first such call in words. */
  indirectCallers: ReadonlyMap<string, string>;
  /** When a declaration file lists every directory its tool deploys (Atlantis, Digger): that
   * file and count in words; null otherwise. */
  completeList: string | null;
  /** No Terragrunt unit, declared root, backend or lock file anywhere in the archive. */
  repoDeploysNothing: boolean;
  /** True when the module at `path` was decided to be a fragment (its calls do not count). */
  isFragment(path: string): boolean;
  /** Why the module at `path` sits in a module library, or null (library.ts). */
  libraryEvidence(path: string): string | null;
  /** Why a README shows the module at `path` used as a module, or null (readme.ts). */
  readmeEvidence(path: string): string | null;
}

/**
 * One signal: given a module and the shared context, the kind it shows, or null when it says
 * nothing about this module. Signals are independent: precedence is their order in `SIGNALS`
 * (index.ts), never a check inside another signal.
 */
export interface Signal {
  /** A stable name (`backend`, `local-calls`), used by tests and docs/classification.md. */
  readonly id: string;
  decide(subject: Subject, ctx: ClassificationContext): KindDecision | null;
}

export const strong = (kind: ModuleKind, reason: string): KindDecision => ({
  kind,
  reason,
  evidence: 'strong',
});
export const weak = (kind: ModuleKind, reason: string): KindDecision => ({ kind, reason, evidence: 'weak' });
