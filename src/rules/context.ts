import type { LockAnalysis } from '../lockfile/types';
import type { Engine, LoadDiagnostic, ModuleInfo, RootTree, ScanConfig } from '../model';
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
 * ran it) the lock-file analysis. The one place that assembles it: the scan and the test harnesses
 * that run rule subsets all use it.
 */
export function ruleContext(loaded: LoadedForRules, config: ScanConfig, lock?: LockAnalysis): RuleContext {
  // Fragments (files copied, linked or templated into other directories) are not modules: no rule
  // judges them on their own.
  // Installed copies of remote modules are third-party code: they count in the trees that call them.
  const modules = loaded.modules.filter((m) => m.kind !== 'fragment' && m.installedCopy === undefined);
  return {
    modules,
    moduleByPath: new Map(loaded.modules.map((m) => [m.path, m])),
    roots: loaded.roots,
    diagnostics: loaded.diagnostics,
    config: { ...config, engine: loaded.engine },
    engine: loaded.engine,
    ...(lock === undefined ? {} : { lock }),
  };
}
