/**
 * What tfguard leaves unchecked on purpose, said once where a reader looks for it
 * (`configuration-not-checked`): trees of scanner test samples (the `scanner-fixture` signal),
 * and Terramate stacks whose Terraform files `terramate generate` writes but the repository does
 * not hold (src/modules/declarations/terramate-generate.ts).
 */
import { compareUtf8 } from '../archive';
import type { LoadDiagnostic, ModuleInfo } from './types';
import type { RepositorySignals } from './repository';
import { parentDir } from './classification/paths';

export function notCheckedDiagnostics(
  modules: ReadonlyMap<string, ModuleInfo>,
  signals: RepositorySignals,
): LoadDiagnostic[] {
  const out: LoadDiagnostic[] = [];
  const fixtures = [...modules.values()]
    .filter((m) => m.kindSignal === 'scanner-fixture')
    .map((m) => m.path)
    .sort(compareUtf8);
  if (fixtures.length > 0) {
    // A fixture tree is the highest directory above fixtures that holds no other module: one
    // notice for a vendored KICS `assets/queries`, not one per query.
    const occupied = new Set<string>();
    for (const m of modules.values()) {
      if (m.kindSignal === 'scanner-fixture') continue;
      for (let d: string | undefined = m.path; d !== undefined; d = parentDir(d)) {
        if (occupied.has(d)) break;
        occupied.add(d);
      }
    }
    const trees = new Map<string, string[]>();
    for (const f of fixtures) {
      let top = f;
      for (let d = parentDir(f); d !== undefined && !occupied.has(d); d = parentDir(d)) top = d;
      const list = trees.get(top) ?? [];
      list.push(f);
      trees.set(top, list);
    }
    for (const [top, dirs] of trees) {
      const first = (modules.get(dirs[0] as string) as ModuleInfo).path;
      const expected =
        signals.expectedResults.get(first) ??
        signals.expectedResults.get(parentDir(first) ?? '.') ??
        (modules.get(first) as ModuleInfo).files[0] ??
        first;
      const files = dirs.reduce((n, d) => n + (modules.get(d) as ModuleInfo).files.length, 0);
      out.push({
        kind: 'configuration-not-checked',
        module: top,
        what: 'scanner-fixtures',
        items: dirs,
        evidence: `${files} file${files === 1 ? '' : 's'} named positive*/negative* beside expected-results files such as ${expected}`,
        location: { file: expected, line: 1 },
      });
    }
  }
  for (const g of signals.declarations.terramateGenerated) {
    out.push({
      kind: 'configuration-not-checked',
      module: g.dir,
      what: 'terramate-generated',
      items: g.files,
      evidence: `Terramate ${g.label} (${g.location.file}:${g.location.line})`,
      location: g.location,
    });
  }
  return out;
}
