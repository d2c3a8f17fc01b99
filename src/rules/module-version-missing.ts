import { compareVersions, parseVersion } from '../constraints';
import type { ModuleCall, ModuleInfo } from '../modules';
import type { RuleFinding } from './types';
import { insertArgumentAfter } from './fix-helpers';
import {
  at,
  callPaths,
  fixWith,
  installedModules,
  isDeployable,
  kindCaveat,
  registryModuleKey,
  releaseLine,
  sourceFor,
  treesWith,
  inputNoun,
} from './helpers';
import type { Rule, RuleContext } from './types';

/**
 * The versions `terraform init` installed for `call` of module `m`, one per root that reaches it
 * (from each root's `.terraform/modules/modules.json`), or why they are not known.
 */
function installedVersions(ctx: RuleContext, m: ModuleInfo, call: ModuleCall): string[] | { reason: string } {
  const trees = treesWith(ctx, m.path).filter((t) => isDeployable(t, ctx));
  if (trees.length === 0) return { reason: `no root module that uses it is in the ${inputNoun(ctx)}` };
  const versions: string[] = [];
  for (const t of trees) {
    const installed = installedModules(ctx, t.root);
    if (installed === null)
      return { reason: `root "${t.root}" has no .terraform/modules/modules.json (terraform init's record)` };
    for (const path of callPaths(t, m.path)) {
      const key = [...path, call.name].join('.');
      const rec = installed.find((r) => r.key === key);
      if (rec === undefined || rec.version === null)
        return {
          reason: `the modules.json of root "${t.root}" has no version for module.${key.split('.').join('.module.')}`,
        };
      if (registryModuleKey(rec.source) !== registryModuleKey(call.source ?? ''))
        return {
          reason: `root "${t.root}" installed it from "${rec.source}", not from the source now written`,
        };
      versions.push(rec.version);
    }
  }
  return versions.length === 0 ? { reason: 'no root reaches the call' } : versions;
}

/** The constraint to add: `~> MAJOR.MINOR` of the installed version in a root module, `>= ` the
 * lowest installed version in a shared one (its callers keep their installed versions). */
function derive(
  ctx: RuleContext,
  m: ModuleInfo,
  call: ModuleCall,
): { constraint: string } | { reason: string } {
  if (kindCaveat(m).weak)
    return { reason: `tfguard's guess of what "${m.path}" is decides the right constraint` };
  if (!isDeployable(m, ctx) && m.kind !== 'shared')
    return { reason: `a ${m.kind} module is not installed by terraform init on its own` };
  const versions = installedVersions(ctx, m, call);
  if (!Array.isArray(versions)) return versions;
  let lowest: string | null = null;
  try {
    for (const v of versions) {
      if (parseVersion(v).prerelease !== '') return { reason: `the installed version ${v} is a pre-release` };
      if (lowest === null || compareVersions(parseVersion(v), parseVersion(lowest)) < 0) lowest = v;
    }
  } catch {
    return { reason: 'an installed version cannot be read' };
  }
  if (lowest === null) return { reason: 'no installed version is known' };
  if (m.kind === 'shared') return { constraint: `>= ${lowest}` };
  if (new Set(versions).size > 1) return { reason: 'the root installed it in several versions' };
  const line = releaseLine(lowest);
  return line === null
    ? { reason: `the installed version ${lowest} is a pre-release` }
    : { constraint: line };
}

/**
 * A registry module without `version` resolves to the newest release at every `init`; "we recommend
 * explicitly constraining the acceptable version numbers to avoid unexpected or unwanted changes"
 * (Terraform docs, Module Blocks → Version).
 *
 * The fix adds the version `terraform init` installed (its `.terraform/modules/modules.json`, when
 * the archive carries it): `~> MAJOR.MINOR` of it in a root module, `>= ` the lowest one installed
 * across the roots in a shared module.
 */
export const moduleVersionMissing: Rule = {
  id: 'module-version-missing',
  defaultSeverity: 'warning',
  summary: 'A module call with a registry source should constrain the module version.',
  check(ctx) {
    const out: RuleFinding[] = [];
    for (const m of ctx.modules) {
      for (const call of m.moduleCalls) {
        if (call.sourceKind !== 'registry') continue;
        if (call.version !== null && call.version.trim() !== '') continue;
        if (m.terragrunt !== undefined && call.location.file === m.terragrunt.file) {
          // A Terragrunt `tfr://` source: the version is its `?version=`, which Terragrunt requires
          // (gruntwork-io/terragrunt internal/tfr/getter.go: "missing version query").
          out.push({
            module: m.path,
            ...at(call.location),
            message: `the Terragrunt unit "${m.path}" uses the registry module "${call.source ?? ''}" (tfr://) without ?version=, which Terragrunt refuses ("missing version query")`,
            note: 'Add ?version=X.Y.Z (the release you have tested) to the tfr:// source.',
          });
          continue;
        }
        const derived = call.version === null ? derive(ctx, m, call) : { reason: 'its version is empty' };
        const src = sourceFor(ctx, call.sourceRange?.file);
        const edits =
          'constraint' in derived && src !== undefined && call.sourceRange !== undefined
            ? insertArgumentAfter(src, call.sourceRange, {
                key: 'version',
                hcl: JSON.stringify(derived.constraint),
                json: JSON.stringify(derived.constraint),
              })
            : undefined;
        out.push({
          module: m.path,
          ...at(call.location),
          message: `module "${call.name}" uses registry source "${call.source ?? ''}" without a version constraint, so every init may pick a newer release`,
          ...('constraint' in derived
            ? {
                fix: fixWith(
                  'constrain the module to the version terraform init installed',
                  `version = "${derived.constraint}"`,
                  edits,
                ),
              }
            : {}),
          note:
            'reason' in derived
              ? `Add version = "~> X.Y" (the release line you have tested; no fix: ${derived.reason}).`
              : 'The constraint keeps the version terraform init installed (.terraform/modules/modules.json).',
        });
      }
    }
    return out;
  },
};
