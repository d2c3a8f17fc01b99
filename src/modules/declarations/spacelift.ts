/**
 * Spacelift: the runtime configuration `.spacelift/config.yml` at the repository root maps stack
 * ids under `stacks` to their settings, `stack_defaults` applying to each; `project_root` is the
 * directory the stack runs in, relative to the repository root
 * (https://docs.spacelift.io/concepts/configuration/runtime-configuration/runtime-yaml-reference).
 * Stacks managed with the Spacelift Terraform provider declare it as the `project_root` argument
 * of `spacelift_stack` resources (read in resources.ts).
 */
import type { DeclarationFile, DeclarationProblem, DeclaredRoot } from './types';
import { dirOf, readYaml, resolveDir, shapeProblem } from './common';
import { isRecord, staticString } from './yaml';

export function isSpaceliftFile(path: string): boolean {
  return /(^|\/)\.spacelift\/config\.ya?ml$/.test(path);
}

export function readSpacelift(file: DeclarationFile): {
  roots: DeclaredRoot[];
  problems: DeclarationProblem[];
} {
  const roots: DeclaredRoot[] = [];
  const problems: DeclarationProblem[] = [];
  const doc = readYaml('Spacelift', file.path, file.text, problems);
  if (doc === null || doc.value === null || doc.value === undefined) return { roots, problems };
  const top = doc.value;
  if (!isRecord(top)) {
    problems.push(shapeProblem('Spacelift', file.path, 1, 'the document is not a mapping'));
    return { roots, problems };
  }
  const base = dirOf(dirOf(file.path));
  const defaults = isRecord(top['stack_defaults']) ? top['stack_defaults'] : {};
  const stacks = top['stacks'];
  if (stacks === undefined || stacks === null) return { roots, problems };
  if (!isRecord(stacks)) {
    problems.push(
      shapeProblem('Spacelift', file.path, doc.keyLine(top, 'stacks'), '"stacks" is not a mapping'),
    );
    return { roots, problems };
  }
  for (const [id, settings] of Object.entries(stacks)) {
    if (!isRecord(settings)) continue;
    const own = staticString(settings['project_root']);
    const written = own ?? staticString(defaults['project_root']);
    if (written === null) continue;
    const line = own !== null ? doc.keyLine(settings, 'project_root') : doc.keyLine(defaults, 'project_root');
    const dir = resolveDir(base, written);
    const label = `stack "${id}"`;
    if (dir === null) {
      problems.push(
        shapeProblem('Spacelift', file.path, line, `${label} has a project_root outside the repository`),
      );
      continue;
    }
    roots.push({ tool: 'Spacelift', dir, written, location: { file: file.path, line }, label });
  }
  return { roots, problems };
}
