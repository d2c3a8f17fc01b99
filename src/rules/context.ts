import type { LockAnalysis } from '../lockfile/types';
import type { Engine, InputKind, ScanConfig } from '../model';
import type { LoadDiagnostic, ModuleInfo, RootTree } from '../modules';
import type { PolicyInput } from '../policy';
import type { Annotation } from './types';
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
 * ran it) the lock-file analysis, the inline annotations, the files' bytes and the input's kind. The one place that assembles it: the scan and the test harnesses
 * that run rule subsets all use it.
 */
export function ruleContext(
  loaded: LoadedForRules,
  config: ScanConfig,
  lock?: LockAnalysis,
  annotations?: readonly Annotation[],
  sources?: ReadonlyMap<string, Buffer>,
  input?: InputKind,
  policy?: PolicyInput,
): RuleContext {
  // Fragments (files copied, linked or templated into other directories) are not modules: no rule
  // judges them on their own.
  // Installed copies of remote modules are third-party code: they count in the trees that call them.
  const byPath = new Map(loaded.modules.map((m) => [m.path, m]));
  const modules = loaded.modules.filter((m) => m.kind !== 'fragment' && m.installedCopy === undefined);
  return {
    modules,
    moduleByPath: byPath,
    roots: loaded.roots,
    // A fragment's calls resolve where its files are copied to, not where they sit: only its parse
    // errors are reported (as notices when it is a template; not at all for a template in a
    // directory the settings declare a fragment: the user confirmed it is not Terraform).
    // Installed third-party code and scanner test samples (one configuration-not-checked notice
    // per fixture tree says what was skipped): nothing.
    diagnostics: loaded.diagnostics.filter((d) => {
      const m = byPath.get(d.module);
      if (m?.installedCopy !== undefined) return false;
      if (m?.kind !== 'fragment') return true;
      // Scanner test samples are fixtures, odd on purpose: not even their parse errors.
      return (
        d.kind === 'parse-error' &&
        m.kindSignal !== 'scanner-fixture' &&
        !(d.template === true && m.kindSignal === 'settings')
      );
    }),
    config: { ...config, engine: loaded.engine },
    engine: loaded.engine,
    ...(lock === undefined ? {} : { lock }),
    ...(annotations === undefined ? {} : { annotations }),
    ...(sources === undefined ? {} : { sources }),
    ...(input === undefined ? {} : { input }),
    ...(policy === undefined ? {} : { policy }),
  };
}
