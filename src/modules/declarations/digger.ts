/**
 * Digger: `digger.yml` (or `digger.yaml`) at the repository root lists `projects`, each with a
 * `dir`, and may generate projects with `generate_projects`: one `include` / `exclude` glob pair,
 * or a list of them under `blocks`. Each directory matching `include` and not `exclude` that holds
 * Terraform files (Terragrunt files for a block with `terragrunt: true`) becomes a project; with
 * `traverse_to_nested_projects: false` (the default) only the first such directory down a path
 * counts (https://docs.digger.dev/ce/howto/generate-projects).
 *
 * A project or a `generate_projects` block with `opentofu: true` runs OpenTofu there; one with
 * `pulumi: true` runs Pulumi, not Terraform, and declares no Terraform root (the `ProjectYaml` and
 * `BlockYaml` fields of https://github.com/diggerhq/digger/blob/develop/libs/digger_config/yaml.go,
 * and https://docs.digger.dev/ce/getting-started/with-opentofu).
 */
import { basename } from '../../archive';
import { matchGlob } from '../glob';
import type { DeclarationFile, DeclarationProblem, DeclaredRoot, EmptyGlob } from './types';

export interface DiggerResult {
  roots: DeclaredRoot[];
  problems: DeclarationProblem[];
  emptyGlobs: EmptyGlob[];
}
import { dirOf, readYaml, resolveDir, shapeProblem } from './common';
import { isRecord, staticString } from './yaml';

export const DIGGER_FILES = new Set(['digger.yml', 'digger.yaml']);

export function isDiggerFile(path: string): boolean {
  return DIGGER_FILES.has(basename(path));
}

export interface DiggerCandidates {
  /** Directories holding Terraform / OpenTofu configuration files. */
  terraform: readonly string[];
  /** Directories holding `terragrunt.hcl`. */
  terragrunt: readonly string[];
}

function relativeTo(base: string, dir: string): string | null {
  if (base === '.') return dir;
  if (dir === base) return '.';
  return dir.startsWith(`${base}/`) ? dir.slice(base.length + 1) : null;
}

function isBelow(ancestor: string, dir: string): boolean {
  return ancestor === '.' ? dir !== '.' : dir.startsWith(`${ancestor}/`);
}

export function readDigger(file: DeclarationFile, candidates: DiggerCandidates): DiggerResult {
  const emptyGlobs: EmptyGlob[] = [];
  const roots: DeclaredRoot[] = [];
  const problems: DeclarationProblem[] = [];
  const doc = readYaml('Digger', file.path, file.text, problems);
  if (doc === null || doc.value === null || doc.value === undefined) return { roots, problems, emptyGlobs };
  const top = doc.value;
  if (!isRecord(top)) {
    problems.push(shapeProblem('Digger', file.path, 1, 'the document is not a mapping'));
    return { roots, problems, emptyGlobs };
  }
  const base = dirOf(file.path);
  const projects = top['projects'];
  if (Array.isArray(projects)) {
    projects.forEach((p, i) => {
      if (!isRecord(p)) return;
      const line = doc.keyLine(p, 'dir', doc.lineOf(projects[i + 1]));
      const written = staticString(p['dir']);
      if (written === null || p['pulumi'] === true) return;
      const dir = resolveDir(base, written);
      const name = staticString(p['name']);
      const label = name === null ? `project dir "${written}"` : `project "${name}"`;
      if (dir === null) {
        problems.push(shapeProblem('Digger', file.path, line, `${label} points outside the repository`));
        return;
      }
      roots.push({
        tool: 'Digger',
        dir,
        written,
        location: { file: file.path, line },
        label,
        ...(p['opentofu'] === true ? { engine: 'opentofu' as const } : {}),
      });
    });
  } else if (projects !== undefined && projects !== null) {
    problems.push(
      shapeProblem('Digger', file.path, doc.keyLine(top, 'projects'), '"projects" is not a list'),
    );
  }

  const generate = top['generate_projects'];
  if (generate === undefined || generate === null) return { roots, problems, emptyGlobs };
  if (!isRecord(generate)) {
    problems.push(
      shapeProblem(
        'Digger',
        file.path,
        doc.keyLine(top, 'generate_projects'),
        '"generate_projects" is not a mapping',
      ),
    );
    return { roots, problems, emptyGlobs };
  }
  const nested = top['traverse_to_nested_projects'] === true;
  const blocks: unknown[] = Array.isArray(generate['blocks']) ? generate['blocks'] : [generate];
  blocks.forEach((b, i) => {
    if (!isRecord(b)) return;
    const include = staticString(b['include']);
    if (include === null) return;
    const exclude = staticString(b['exclude']);
    const line = doc.keyLine(b, 'include', doc.lineOf(blocks[i + 1]));
    const pool = b['terragrunt'] === true ? candidates.terragrunt : candidates.terraform;
    const matched = pool.filter((dir) => {
      const rel = relativeTo(base, dir);
      return rel !== null && matchGlob(include, rel) && (exclude === null || !matchGlob(exclude, rel));
    });
    const kept = nested ? matched : matched.filter((d) => !matched.some((a) => isBelow(a, d)));
    const label = `generate_projects include "${include}"`;
    if (kept.length === 0) {
      // A glob that matches no directory is reported like a missing directory.
      emptyGlobs.push({ tool: 'Digger', written: include, location: { file: file.path, line }, label });
      return;
    }
    for (const dir of kept) {
      roots.push({
        tool: 'Digger',
        dir,
        written: include,
        location: { file: file.path, line },
        label,
        glob: true,
        ...(b['opentofu'] === true ? { engine: 'opentofu' as const } : {}),
      });
    }
  });
  return { roots, problems, emptyGlobs };
}
