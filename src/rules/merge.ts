import type { Finding } from './types';
import { compareStrings } from './helpers';

function keyOf(f: Finding): string {
  return JSON.stringify([
    f.ruleId,
    f.file,
    f.line,
    f.range?.start.column ?? null,
    f.message,
    f.confidence ?? null,
  ]);
}

/**
 * One finding per location: several modules that read one file (Terragrunt units sharing a
 * generated `provider.tf`, whose findings all point at the `generate` block) would each report the
 * same message at the same line without saying which unit is meant. They become one finding whose
 * `module` is the first of them and whose `modules` lists them all, named in the message. When
 * their fixes differ (each unit's lock file suggests its own bound), the merged finding has no fix
 * and its note gives each module's advice; repeated findings of a single module are left alone.
 */
export function mergeSameLocation(findings: readonly Finding[]): Finding[] {
  // Only findings of more than one module can merge: most rules' findings have none, so the keys
  // are built only when two findings share a file and line (keyOf is the costly part).
  const byLine = new Map<string, number>();
  for (const f of findings) {
    if (f.file === null || f.line === null) continue;
    const at = `${f.file}\u0000${f.line}`;
    byLine.set(at, (byLine.get(at) ?? 0) + 1);
  }
  const keys = findings.map((f) =>
    f.file === null || f.line === null || (byLine.get(`${f.file}\u0000${f.line}`) ?? 0) < 2 ? null : keyOf(f),
  );
  const groups = new Map<string, Finding[]>();
  findings.forEach((f, i) => {
    const key = keys[i];
    if (key === null || key === undefined) return;
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [f]);
    else list.push(f);
  });
  const modulesOf = new Map<Finding[], string[]>();
  const out: Finding[] = [];
  findings.forEach((f, i) => {
    const key = keys[i];
    const group = key === null || key === undefined ? undefined : groups.get(key);
    let modules: string[] = [];
    if (group !== undefined) {
      let known = modulesOf.get(group);
      if (known === undefined) {
        known = [...new Set(group.map((g) => g.module))].sort(compareStrings);
        modulesOf.set(group, known);
      }
      modules = known;
    }
    if (group === undefined || modules.length < 2) {
      out.push(f);
      return;
    }
    if (f !== group[0]) return;
    const same = (get: (g: Finding) => unknown): boolean =>
      group.every((g) => JSON.stringify(get(g)) === JSON.stringify(get(f)));
    if (!same((g) => g.fix ?? null)) delete f.fix;
    if (!same((g) => g.note ?? null)) {
      const byNote = new Map<string, string[]>();
      for (const g of group) {
        if (g.note === undefined) continue;
        const list = byNote.get(g.note) ?? [];
        if (!list.includes(g.module)) list.push(g.module);
        byNote.set(g.note, list);
      }
      f.note = [...byNote]
        .map(([note, mods]) => `For ${mods.sort(compareStrings).join(', ')}: ${note}`)
        .join(' ');
    }
    f.module = modules[0] as string;
    f.modules = [...modules];
    f.message += ` (the same for the ${modules.length} modules that read this file: ${modules.join(', ')})`;
    out.push(f);
  });
  return out;
}
