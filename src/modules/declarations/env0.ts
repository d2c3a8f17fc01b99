/**
 * env0: a workflow file `env0.workflow.yml` (or `.yaml`) maps sub-environment aliases under
 * `environments` to either a `templateName` (a template defined in env0, whose directory the
 * repository does not say) or an inline `vcs` block with the `repository` and the `path` of the
 * configuration in it (https://docs.envzero.com/guides/admin-guide/workflows/workflow-file-reference).
 * A `vcs.path` is a root; since `repository` may name another repository, a path this archive
 * lacks is only likely missing.
 */
import { basename } from '../../archive';
import type { DeclarationFile, DeclarationProblem, DeclaredRoot } from './types';
import { readYaml, resolveDir, shapeProblem } from './common';
import { isRecord, staticString } from './yaml';
import { ELSEWHERE } from './hcl-readers';

export function isEnv0File(path: string): boolean {
  return /^env0\.workflow\.ya?ml$/.test(basename(path));
}

export function readEnv0(file: DeclarationFile): { roots: DeclaredRoot[]; problems: DeclarationProblem[] } {
  const roots: DeclaredRoot[] = [];
  const problems: DeclarationProblem[] = [];
  const doc = readYaml('env0', file.path, file.text, problems);
  if (doc === null || doc.value === null || doc.value === undefined) return { roots, problems };
  const top = doc.value;
  if (!isRecord(top)) {
    problems.push(shapeProblem('env0', file.path, 1, 'the document is not a mapping'));
    return { roots, problems };
  }
  const envs = top['environments'];
  if (envs === undefined || envs === null) return { roots, problems };
  if (!isRecord(envs)) {
    problems.push(
      shapeProblem('env0', file.path, doc.keyLine(top, 'environments'), '"environments" is not a mapping'),
    );
    return { roots, problems };
  }
  for (const [alias, env] of Object.entries(envs)) {
    if (!isRecord(env) || !isRecord(env['vcs'])) continue;
    const vcs = env['vcs'];
    const written = staticString(vcs['path']);
    if (written === null) continue;
    const line = doc.keyLine(vcs, 'path');
    const dir = resolveDir('.', written);
    if (dir === null) continue;
    roots.push({
      tool: 'env0',
      dir,
      written,
      location: { file: file.path, line },
      label: `environment "${alias}"`,
      uncertain: ELSEWHERE,
    });
  }
  return { roots, problems };
}
