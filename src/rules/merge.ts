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
  const groups = new Map<string, Finding[]>();
  for (const f of findings) {
    if (f.file === null || f.line === null) continue;
    const key = keyOf(f);
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [f]);
    else list.push(f);
  }
  const out: Finding[] = [];
  for (const f of findings) {
    const group = f.file === null || f.line === null ? undefined : groups.get(keyOf(f));
    const modules = group === undefined ? [] : [...new Set(group.map((g) => g.module))].sort(compareStrings);
    if (group === undefined || modules.length < 2) {
      out.push(f);
      continue;
    }
    if (f !== group[0]) continue;
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
    f.modules = modules;
    f.message += ` (the same for the ${modules.length} modules that read this file: ${modules.join(', ')})`;
    out.push(f);
  }
  return out;
}
