/**
 * Installed copies of remote modules that an input carries (`.terraform/modules/…` after
 * `terraform init`, or vendored copies): which local calls lead into them, and why a call into one
 * that is missing is not a missing module.
 */
import { compareUtf8 } from '../../archive';
import type { ModuleInfo } from '../types';

export const INSTALLED_MODULES = /(^|\/)\.terraform\/modules\//;
/** The remote module a path under `.terraform/modules/<name>/…` belongs to. */
const INSTALLED_MODULE_NAME = /(?:^|\/)\.terraform\/modules\/([^/]+)/;

/** Local calls into `.terraform/modules/…` from loaded modules, with the remote module each
 * belongs to (for an installed module's own calls: the module it was installed for). */
export function installedTargets(
  modules: ReadonlyMap<string, ModuleInfo>,
  copies: ReadonlyMap<string, string>,
): { dir: string; from: string }[] {
  const out: { dir: string; from: string }[] = [];
  for (const m of modules.values()) {
    for (const call of m.moduleCalls) {
      if (call.sourceKind !== 'local' || call.target === null || !INSTALLED_MODULES.test(`${call.target}/`))
        continue;
      const inherited = copies.get(m.path);
      const name = INSTALLED_MODULE_NAME.exec(call.target)?.[1] ?? call.name;
      const remote = m.moduleCalls.find((c) => c.name === name && c.sourceKind !== 'local');
      const from = inherited ?? `"${name}"${remote?.source ? ` (${remote.source})` : ''}`;
      out.push({ dir: call.target, from });
    }
  }
  return out.sort((a, b) => compareUtf8(a.dir, b.dir));
}

/** Why a local call that points at a directory the archive does not hold is an installed copy of
 * a remote module (created by `terraform init` or a vendoring script), or null. */
export function installedCopyReason(source: string, caller: ModuleInfo): string | null {
  const m = INSTALLED_MODULE_NAME.exec(source);
  if (m !== null) {
    const name = m[1] as string;
    const remote = caller.moduleCalls.find((c) => c.name === name && c.sourceKind !== 'local');
    return remote !== undefined
      ? `it is part of the remote module "${name}" (${remote.source ?? 'no source'}) that terraform init installs under .terraform/modules`
      : `it points into .terraform/modules, where terraform init installs remote modules`;
  }
  const path = source.replace(/^\.\//, '');
  if (path.includes('//')) {
    return 'its "//" marks a subdirectory of a package copied in before init (a vendored copy of a remote module)';
  }
  if (/(^|\/)vendor(\/|$)/.test(path)) return 'it points into a vendor directory filled before init';
  return null;
}
