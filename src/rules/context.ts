import type { LockAnalysis } from '../lockfile/types';
import type { Engine, LoadDiagnostic, ModuleInfo, RootTree, ScanConfig } from '../model';
import type { Annotation } from './suppress';
import type { RuleContext } from './types';

/** What the module loader produced (`LoadedModules`), as far as the rules read it. */
export interface LoadedForRules {
  modules: ModuleInfo[];
  roots: RootTree[];
  diagnostics: LoadDiagnostic[];
  engine: Engine;
}

/**
 * The context the rules run in, from the loader's output, the resolved settings and (when the scan
 * ran it) the lock-file analysis and the inline annotations. The one place that assembles it: the scan and the test harnesses
 * that run rule subsets all use it.
 */
export function ruleContext(
  loaded: LoadedForRules,
  config: ScanConfig,
  lock?: LockAnalysis,
  annotations?: readonly Annotation[],
): RuleContext {
  return {
    modules: loaded.modules,
    moduleByPath: new Map(loaded.modules.map((m) => [m.path, m])),
    roots: loaded.roots,
    diagnostics: loaded.diagnostics,
    config: { ...config, engine: loaded.engine },
    engine: loaded.engine,
    ...(lock === undefined ? {} : { lock }),
    ...(annotations === undefined ? {} : { annotations }),
  };
}
