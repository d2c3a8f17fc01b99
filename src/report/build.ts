import { suggestionFor } from '../fix';
import type { Engine, TextEdit } from '../model';
import type { Finding } from '../rules';
import type { LoadedArchive } from '../archive';
import type { ModuleInfo, RootTree } from '../modules';
import { SEVERITIES } from '../model';
import type { ModuleReport, Report, RootReport, Summary } from './types';
import { TOOL_VERSION } from '../version';
import type { LockAnalysis } from '../lockfile/types';

export interface ReportInput {
  archive: LoadedArchive;
  engine: Engine;
  configFiles: string[];
  modules: ModuleInfo[];
  roots: RootTree[];
  /** Lock-file analysis, when it ran: adds each root's lock file and locked versions. */
  lock?: LockAnalysis;
  findings: Finding[];
}

const CONFIG_SUFFIXES = ['.tf', '.tf.json', '.tofu', '.tofu.json'];

function isConfigFile(path: string): boolean {
  return CONFIG_SUFFIXES.some((suffix) => path.endsWith(suffix));
}

export function moduleReport(m: ModuleInfo): ModuleReport {
  return {
    path: m.path,
    kind: m.kind,
    kindReason: m.kindReason,
    kindEvidence: m.kindEvidence,
    ...(m.unitSourceOf !== undefined ? { unitSourceOf: [...m.unitSourceOf] } : {}),
    ...(m.terragrunt !== undefined
      ? { terragrunt: { ...m.terragrunt, generated: [...m.terragrunt.generated] } }
      : {}),
    files: [...m.files],
    providers: m.providers.map((p) => ({
      name: p.name,
      source: p.source,
      constraints: p.constraints,
      declared: p.declared ? { file: p.declared.file, line: p.declared.line } : null,
      implicit: p.implicit,
      configurationAliases: [...p.configurationAliases],
    })),
    providerConfigs: m.providerConfigs.map((c) => ({
      name: c.name,
      alias: c.alias,
      file: c.location.file,
      line: c.location.line,
    })),
    moduleCalls: m.moduleCalls.map((c) => ({
      name: c.name,
      source: c.source,
      sourceKind: c.sourceKind,
      version: c.version,
      providers: { ...c.providers },
      // Archive-relative by contract: a call that climbs above the archive root has no target here
      // (it is reported by module-source-missing).
      target: c.target !== null && (c.target === '..' || c.target.startsWith('../')) ? null : c.target,
      file: c.location.file,
      line: c.location.line,
    })),
    // Report locations are file and line (the schema's `location`); ranges are for findings.
    backend: m.backend && {
      ...m.backend,
      location: { file: m.backend.location.file, line: m.backend.location.line },
    },
    requiredVersion: m.requiredVersions.map((r) => r.value),
    lockFile: m.lockFile,
  };
}

/** A root's part of the report; `analysis`, its lock analysis when the scan ran one. */
export function rootReport(r: RootTree, analysis?: LockAnalysis['roots'][number]): RootReport {
  const locked = (analysis?.lock?.providers ?? [])
    .filter((p) => p.source !== null && !p.duplicate)
    .map((p) => ({ source: p.source as string, version: p.version }))
    .sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : 0));
  return {
    path: r.root,
    kind: r.kind,
    engine: r.engine,
    modules: [...r.modules],
    remoteModules: r.remoteCalls.map((c) => ({ ...c })),
    ...(r.remoteModules === undefined
      ? {}
      : {
          remoteModuleTree: r.remoteModules.map((m) => ({
            key: m.key,
            parent: m.parent,
            module: m.module,
            file: m.location.file,
            line: m.location.line,
            name: m.name,
            source: m.source,
            version: m.version,
            address: m.address,
            resolvedVersion: m.resolvedVersion,
            origin: m.origin,
            ...(m.unresolved !== undefined ? { unresolved: m.unresolved } : {}),
            providers: m.providers.map((p) => ({ source: p.source, constraints: [...p.constraints] })),
          })),
        }),
    providers: r.providers.map((p) => ({ source: p.source, constraints: p.constraints })),
    lock: analysis?.lockFile ? { file: analysis.lockFile, providers: locked } : null,
  };
}

/** Counts per severity of the findings that are not suppressed (`total` is their sum); suppressed
 * findings are counted only in `suppressed`. */
export function summarize(findings: Finding[], modules: number, roots: number): Summary {
  const counts = { error: 0, warning: 0, notice: 0 };
  let suppressed = 0;
  for (const f of findings) {
    if (f.suppressed !== undefined) suppressed += 1;
    else counts[f.severity] += 1;
  }
  return { ...counts, total: SEVERITIES.reduce((n, s) => n + counts[s], 0), modules, roots, suppressed };
}

/** Assembles the JSON report. Pure and deterministic: the same input gives byte-identical JSON. */
/** A finding whose fix is one edit gets the lines it touches as they read after it (`Fix.suggestion`). */
function withSuggestion(f: Finding, archive: ReportInput['archive']): Finding {
  const edits = f.fix?.edits;
  if (f.fix === undefined || edits === undefined || edits.length !== 1) return f;
  const edit = edits[0] as TextEdit;
  const content = archive.files.get(edit.range.file);
  const suggestion = content === undefined ? null : suggestionFor(content, edit);
  return suggestion === null ? f : { ...f, fix: { ...f.fix, suggestion } };
}

export function buildReport(input: ReportInput): Report {
  const { archive } = input;
  const analyses = new Map<string, LockAnalysis['roots'][number]>();
  for (const a of input.lock?.roots ?? []) if (!analyses.has(a.root)) analyses.set(a.root, a);
  const fileCount = archive.entries.filter((e) => e.type === 'file').length;
  const configFiles = archive.entries.filter((e) => e.type === 'file' && isConfigFile(e.path)).length;
  return {
    schemaVersion: 1,
    tool: { name: 'tfguard', version: TOOL_VERSION },
    source: {
      name: archive.name,
      sha256: archive.sha256,
      format: archive.format,
      files: fileCount,
      configFiles,
    },
    engine: input.engine,
    configFiles: [...input.configFiles],
    modules: input.modules.map(moduleReport),
    roots: input.roots.map((r) => rootReport(r, analyses.get(r.root))),
    findings: input.findings.map((f) => withSuggestion(f, archive)),
    summary: summarize(
      input.findings,
      input.modules.length,
      input.roots.filter((r) => r.kind === 'root').length,
    ),
  };
}
