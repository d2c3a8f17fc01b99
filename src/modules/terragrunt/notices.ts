/**
 * What the loader says about Terragrunt beyond the units' trees: locations inside generated
 * contents moved to the `generate` block that writes them, and a notice per `terragrunt.stack.hcl`
 * saying what it generates and what tfguard therefore did not check.
 */
import type { LoadDiagnostic, ModuleInfo } from '../types';
import type { GeneratedFile } from './unit';
import type { RepositorySignals } from '../repository';
import { dirname } from '../../archive';
import type { InputKind } from '../../model';

/**
 * Moves every location of `m` that points into generated contents (parsed under a virtual name,
 * `<file>#generate:<name>`) to the `generate` block's file: the contents' own line when the heredoc
 * kept its lines, the block's line otherwise. The exact range is dropped: it is not a span of the
 * repository's file, so no fix may edit it.
 */
export function relocateGenerated(m: ModuleInfo, virtualFiles: ReadonlyMap<string, GeneratedFile>): void {
  if (virtualFiles.size === 0) return;
  const seen = new Set<object>();
  const visit = (o: unknown): void => {
    if (o === null || typeof o !== 'object' || seen.has(o)) return;
    seen.add(o);
    if (Array.isArray(o)) {
      for (const x of o) visit(x);
      return;
    }
    const rec = o as Record<string, unknown>;
    for (const [k, v] of Object.entries(rec)) {
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
        const f = (v as { file?: unknown }).file;
        if (typeof f === 'string' && virtualFiles.has(f) && 'start' in v && 'end' in v) {
          delete rec[k];
          continue;
        }
      }
      visit(v);
    }
    const file = rec.file;
    if (typeof file === 'string' && typeof rec.line === 'number') {
      const g = virtualFiles.get(file);
      if (g !== undefined) {
        rec.file = g.location.file;
        rec.line = g.firstLine === null ? g.location.line : g.firstLine + rec.line - 1;
      }
    }
  };
  visit(m.providers);
  visit(m.providerUses);
  visit(m.providerConfigs);
  visit(m.moduleCalls);
  visit(m.backend);
  visit(m.requiredVersions);
  visit(m.requiredProvidersBlocks);
}

/** One notice per `terragrunt.stack.hcl` and per catalog unit template: Terragrunt generates the
 * deployed units (`.terragrunt-stack/<path>`) when it runs; tfguard reads what is in the archive. */
export function stackNotices(signals: RepositorySignals, input: InputKind = 'archive'): LoadDiagnostic[] {
  const out: LoadDiagnostic[] = [];
  for (const s of signals.stacks) {
    const dir = dirname(s.file) || '.';
    const listed = s.blocks.map(
      (b) =>
        `${b.type} "${b.name}" (source ${b.source === null ? 'not a literal' : JSON.stringify(b.source)}` +
        `${b.path === null ? '' : `, path ${JSON.stringify(b.path)}`})`,
    );
    out.push({
      kind: 'terragrunt-unresolved',
      module: dir,
      what: 'terragrunt.stack.hcl',
      reasons: [
        s.blocks.length === 0
          ? 'it declares no unit or stack blocks tfguard could read'
          : `it generates ${listed.join(', ')} into ${dir === '.' ? '' : `${dir}/`}.terragrunt-stack/ when Terragrunt runs; ` +
            `those generated units, their values and their lock files are not in the ${input} and were not checked ` +
            '(catalog units and the modules they run are checked where they sit)',
      ],
      location: { file: s.file, line: s.blocks[0]?.line ?? 1 },
      partial: false,
    });
  }
  for (const t of signals.unitTemplates) {
    out.push({
      kind: 'terragrunt-unresolved',
      module: t.dir,
      what: 'catalog unit',
      reasons: [
        `${t.file} reads values.*, which a terragrunt.stack.hcl unit block supplies: it is a template, ` +
          'not a unit deployed here, so it gets no root and no lock file check' +
          (t.target !== null && t.target !== t.dir ? ` (its source ${t.target} is checked as a module)` : ''),
      ],
      location: t.location,
      partial: false,
    });
  }
  return out;
}
