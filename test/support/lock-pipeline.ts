/**
 * The lock-file half of the scan pipeline, over real components: files → real tar.gz → archive
 * reader (loading config files, provider zips and `.terraform/modules/modules.json`) → HCL parser →
 * module loader → remote modules (installed copies only: no network) → `analyzeLocks` → the
 * `lock-*` rules through the rule engine. Used by the rule tests; the differential test uses the
 * full scan (`test/support/scan.ts`).
 */
import { defaultShouldLoad, readArchiveBytes } from '../../src/archive';
import { HclParser } from '../../src/hcl';
import { analyzeLocks, isProviderPackageZip } from '../../src/lockfile';
import type { LockAnalysis, RegistryClient } from '../../src/lockfile';
import type { Finding } from '../../src/rules';
import type { ScanConfig } from '../../src/model';
import { isModulesManifest, loadModules, resolveRemoteModules } from '../../src/modules';
import { ruleContext, runRules } from '../../src/rules';
import { LOCK_RULES } from '../../src/rules';
import type { RuleContext } from '../../src/rules/types';
import { DEFAULT_CONFIG } from '../../src/scan/config-file';
import { makeTarGz } from './archive';
import type { FileMap } from './archive';

let parser: HclParser | null = null;

function sharedParser(): HclParser {
  parser ??= new HclParser();
  return parser;
}

export async function closeLockParser(): Promise<void> {
  const p = parser;
  parser = null;
  await p?.close();
}

export interface LockScan {
  findings: Finding[];
  analysis: LockAnalysis;
  ctx: RuleContext;
}

export async function lockScan(
  files: FileMap,
  options: { config?: Partial<ScanConfig>; registry?: RegistryClient } = {},
): Promise<LockScan> {
  const bytes = await makeTarGz(files);
  const archive = await readArchiveBytes('inline.tar.gz', bytes, {
    shouldLoad: (p) => defaultShouldLoad(p) || isProviderPackageZip(p) || isModulesManifest(p),
  });
  const config: ScanConfig = { ...DEFAULT_CONFIG, ...options.config };
  const p = sharedParser();
  const loaded = await resolveRemoteModules(await loadModules({ archive, config, parser: p }), {
    archive,
    config,
    parser: p,
    network: null,
  });
  const analysis = await analyzeLocks({
    archive,
    modules: loaded.modules,
    roots: loaded.roots,
    config,
    parser: p,
    engine: loaded.engine,
    ...(options.registry === undefined ? {} : { registry: options.registry }),
  });
  const ctx = ruleContext(loaded, config, analysis);
  return { findings: runRules(ctx, LOCK_RULES), analysis, ctx };
}

/** `{ruleId, line, message}` of the findings of one rule (or all), for compact assertions. */
export function summarize(
  findings: Finding[],
  ruleId?: string,
): Array<{ rule: string; file: string | null; line: number | null; message: string }> {
  return findings
    .filter((f) => ruleId === undefined || f.ruleId === ruleId)
    .map((f) => ({ rule: f.ruleId, file: f.file, line: f.line, message: f.message }));
}
