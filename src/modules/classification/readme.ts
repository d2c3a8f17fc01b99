/**
 * Module library shape, from README usage blocks: `source = "…//<dir>?ref=…"` names a directory of
 * this repository as a module (matched by its path), or a placeholder (`<<Module Name>>`,
 * `{module}`) says that the directories at that depth are modules. README sources are indexed by
 * the README's directory, so that a module looks only at the READMEs of its ancestors.
 */
import type { RepositorySignals } from '../repository';
import { cleanRelativePath } from '../../addrs';
import { parentDir } from './paths';

function matchSource(path: string, readme: string, source: string): string | null {
  const rel = readme === '.' ? path : readme === path ? '.' : path.slice(readme.length + 1);
  if (source.startsWith('./') || source.startsWith('../')) return null;
  const scheme = source.indexOf('://');
  const idx = source.indexOf('//', scheme < 0 ? 0 : scheme + 3);
  if (idx < 0) {
    // A registry or git source for the repository itself: the README's own directory.
    if (rel === '.' && /^[\w.-]+\/[\w.-]+\/[\w.-]+$|^(git::|github\.com\/|git@)/.test(source)) {
      return `the README shows it used as a module (source = "${source}")`;
    }
    return null;
  }
  const sub = cleanRelativePath(source.slice(idx + 2).replace(/[?#].*$/, ''));
  if (sub === rel) return `the README shows it used as a module (source = "${source}")`;
  const placeholder = /[<>{}]|\$\{/.test(sub);
  if (placeholder && sub.split('/').length === rel.split('/').length && rel !== '.') {
    return `the README shows the directories at this depth used as modules (source = "${source}")`;
  }
  return null;
}

export interface ReadmeIndex {
  /** Why a README shows the module at `path` used as a module, or null. */
  evidence(path: string): string | null;
}

export function readmeIndex(signals: Pick<RepositorySignals, 'readmeSources'>): ReadmeIndex {
  /** README directory → its sources, with their order in `readmeSources` (the first match wins). */
  const byDir = new Map<string, { order: number; source: string }[]>();
  signals.readmeSources.forEach(({ readme, source }, order) => {
    const list = byDir.get(readme) ?? [];
    list.push({ order, source });
    byDir.set(readme, list);
  });
  return {
    evidence(path: string): string | null {
      if (byDir.size === 0) return null;
      const candidates: { order: number; source: string; readme: string }[] = [];
      for (let dir: string | undefined = path; dir !== undefined; dir = parentDir(dir)) {
        for (const s of byDir.get(dir) ?? []) candidates.push({ ...s, readme: dir });
      }
      candidates.sort((a, b) => a.order - b.order);
      for (const c of candidates) {
        const found = matchSource(path, c.readme, c.source);
        if (found !== null) return found;
      }
      return null;
    },
  };
}
