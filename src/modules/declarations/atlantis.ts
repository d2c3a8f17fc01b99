/**
 * Atlantis: the repository-level `atlantis.yaml` (or `atlantis.yml`) at the repository root lists
 * `projects`, each with a `dir` relative to the root where Atlantis runs plan and apply
 * (https://www.runatlantis.io/docs/repo-level-atlantis-yaml). With `autodiscover` (`mode: enabled`,
 * or `auto` with no projects) Atlantis finds further projects itself from the changed files: those
 * are not declarations, and tfguard's own classification decides them.
 */
import { basename } from '../../archive';
import type { DeclarationFile, DeclarationProblem, DeclaredRoot } from './types';
import { dirOf, readYaml, resolveDir, shapeProblem } from './common';
import { isRecord, staticString } from './yaml';

export const ATLANTIS_FILES = new Set(['atlantis.yaml', 'atlantis.yml']);

export function isAtlantisFile(path: string): boolean {
  return ATLANTIS_FILES.has(basename(path));
}

export function readAtlantis(file: DeclarationFile): {
  roots: DeclaredRoot[];
  problems: DeclarationProblem[];
  /** True when the projects are all that Atlantis runs: autodiscover is not `mode: enabled` (with
   * `auto`, the default, Atlantis discovers projects only when none is configured). */
  complete: boolean;
} {
  const roots: DeclaredRoot[] = [];
  const problems: DeclarationProblem[] = [];
  const doc = readYaml('Atlantis', file.path, file.text, problems);
  if (doc === null || doc.value === null || doc.value === undefined)
    return { roots, problems, complete: false };
  if (!isRecord(doc.value)) {
    problems.push(shapeProblem('Atlantis', file.path, 1, 'the document is not a mapping'));
    return { roots, problems, complete: false };
  }
  const projects = doc.value['projects'];
  if (projects === undefined || projects === null) return { roots, problems, complete: false };
  if (!Array.isArray(projects)) {
    problems.push(
      shapeProblem('Atlantis', file.path, doc.keyLine(doc.value, 'projects'), '"projects" is not a list'),
    );
    return { roots, problems, complete: false };
  }
  const base = dirOf(file.path);
  projects.forEach((p, i) => {
    if (!isRecord(p)) return;
    const next = doc.lineOf(projects[i + 1]);
    const line = doc.keyLine(p, 'dir', next);
    const written = staticString(p['dir']);
    if (written === null) {
      problems.push(
        shapeProblem('Atlantis', file.path, doc.lineOf(p) ?? 1, `project ${i + 1} has no "dir" string`),
      );
      return;
    }
    const dir = resolveDir(base, written);
    const name = staticString(p['name']);
    const label = name === null ? `project dir "${written}"` : `project "${name}"`;
    if (dir === null) {
      problems.push(
        shapeProblem('Atlantis', file.path, line, `${label} points outside the repository ("${written}")`),
      );
      return;
    }
    roots.push({ tool: 'Atlantis', dir, written, location: { file: file.path, line }, label });
  });
  const auto = doc.value['autodiscover'];
  const mode = isRecord(auto) ? staticString(auto['mode']) : null;
  return { roots, problems, complete: roots.length > 0 && mode !== 'enabled' };
}
