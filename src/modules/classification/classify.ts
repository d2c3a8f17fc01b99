/**
 * What every directory is: root, shared (reusable), example, test or fragment. Real repositories
 * are read as a whole, as a list of independent signals (signals/*.ts), strongest first: the first
 * signal that returns a decision decides, and its reason is the module's `kindReason`;
 * `kindEvidence` says whether it is strong enough for findings that depend on the kind to be
 * stated as facts. docs/classification.md describes each signal with the real layouts it serves.
 *
 * Adding a signal is one file in signals/ and one line in `SIGNALS`.
 */
import type { ModuleInfo, ModuleKind } from '../types';
import { compareUtf8 } from '../../archive';
import type { ClassifyInput, KindDecision, Signal } from './types';
import { buildContext, subjectOf } from './context';
import { settings } from './signals/settings';
import { deploymentDeclaration } from './signals/deployment-declaration';
import { terragruntUnit } from './signals/terragrunt-unit';
import { terragruntTemplate } from './signals/terragrunt-template';
import { generateSource } from './signals/generate-source';
import { generatedCopy } from './signals/generated-copy';
import { templateFiles } from './signals/template-files';
import { mixinFiles } from './signals/mixin-files';
import { linkedFiles } from './signals/linked-files';
import { scannerFixture } from './signals/scanner-fixture';
import { testHelper } from './signals/test-helper';
import { terragruntSource } from './signals/terragrunt-source';
import { localCalls } from './signals/local-calls';
import { indirectCall } from './signals/indirect-call';
import { backend } from './signals/backend';
import { examplePlace } from './signals/example-place';
import { testPlace } from './signals/test-place';
import { wrapper } from './signals/wrapper';
import { readmeUsage } from './signals/readme-usage';
import { privateModulesPlace } from './signals/private-modules-place';
import { nothingToDeploy } from './signals/nothing-to-deploy';
import { lockFile } from './signals/lock-file';
import { undeclaredProject } from './signals/undeclared-project';
import { deploymentPlace } from './signals/deployment-place';
import { topDirectory } from './signals/top-directory';
import { providerConfiguration } from './signals/provider-configuration';
import { moduleLibrary } from './signals/module-library';
import { modulesPlace } from './signals/modules-place';
import { uncalled } from './signals/uncalled';

export type { CallerRef, ClassificationContext, ClassifyInput, KindDecision, Signal, Subject } from './types';
export { strong, weak } from './types';
export {
  EXAMPLE_SEGMENTS,
  MIXIN_SEGMENT,
  ROOT_SEGMENTS,
  SHARED_SEGMENT,
  TEST_SEGMENTS,
  WRAPPER_SEGMENT,
} from './paths';
export { buildContext, subjectOf } from './context';

/** The signals, strongest first: the order is the precedence. */
export const SIGNALS: readonly Signal[] = [
  // 1. Settings: the user's word.
  settings,
  // 2. Declarations: what the repository's own tooling says it deploys or generates.
  //    (Further Terragrunt declarations go here.)
  deploymentDeclaration,
  terragruntUnit,
  terragruntTemplate,
  generateSource,
  generatedCopy,
  templateFiles,
  mixinFiles,
  linkedFiles,
  scannerFixture,
  testHelper,
  // 3. Structure: calls and backends.
  terragruntSource,
  localCalls,
  indirectCall,
  backend,
  // 4. Places and names, and lock files (after examples and tests: an example keeps its lock).
  examplePlace,
  testPlace,
  wrapper,
  readmeUsage,
  privateModulesPlace,
  nothingToDeploy,
  lockFile,
  undeclaredProject,
  deploymentPlace,
  topDirectory,
  // 5. Guesses (weak), the last of which always decides.
  moduleLibrary,
  providerConfiguration,
  modulesPlace,
  uncalled,
];

/** The first decision of `signals` for the module (the last signal must always decide). */
export function decideWith(
  signals: readonly Signal[],
  subject: ReturnType<typeof subjectOf>,
  ctx: ReturnType<typeof buildContext>,
): KindDecision {
  for (const s of signals) {
    const d = s.decide(subject, ctx);
    if (d !== null) return { ...d, signal: s.id };
  }
  throw new Error(`no classification signal decided for "${subject.path}"`);
}

/** Decides every module's kind. Pure: reads the modules and the signals, returns decisions. */
export function classifyModules(
  input: ClassifyInput,
  signals: readonly Signal[] = SIGNALS,
): Map<string, KindDecision> {
  // Fragments are decided first, so that their calls do not make other modules "called".
  const fragments = new Set<string>();
  const ctx = buildContext(input, fragments);
  const subjects = [...input.modules.values()]
    .sort((a, b) => compareUtf8(a.path, b.path))
    .map((m: ModuleInfo) => subjectOf(m));
  for (const s of subjects) {
    if (decideWith(signals, s, ctx).kind === 'fragment') fragments.add(s.path);
  }
  const out = new Map<string, KindDecision>();
  for (const s of subjects) out.set(s.path, decideWith(signals, s, ctx));
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
