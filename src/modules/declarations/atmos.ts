/**
 * Atmos: `atmos.yaml` sets where Terraform components live (`components.terraform.base_path`,
 * default `components/terraform`) and where stack manifests live (`stacks.base_path`, default
 * `stacks`, narrowed by `stacks.included_paths` / `excluded_paths`), both under the optional
 * top-level `base_path`. Every manifest's `components.terraform.<name>` is a component instance
 * that Atmos runs as a root module in `<components base>/<metadata.component or name>`; one with
 * `metadata.type: abstract` is a base for others and never deployed
 * (https://atmos.tools/components/terraform, https://atmos.tools/core-concepts/stacks).
 * Atmos YAML functions (`!terraform.output …`, `!env …`) are read as plain strings; a manifest
 * whose Go templates break the YAML is reported and skipped.
 */
import { basename } from '../../archive';
import { matchGlob } from '../glob';
import type { DeclarationFile, DeclarationProblem, DeclaredRoot } from './types';
import { dirOf, readYaml, resolveDir, shapeProblem } from './common';
import type { YamlDocument } from './yaml';
import { isRecord, staticString } from './yaml';

export function isAtmosConfig(path: string): boolean {
  return basename(path) === 'atmos.yaml';
}

/** Custom tags (`!terraform.output`, `!include`, `!env`) are Atmos functions: drop the tag, keep
 * the text (standard `!!` tags stay). */
function withoutAtmosTags(text: string): string {
  return text.replace(/(^|[\s:[{,-])!(?!!)[A-Za-z][\w.-]*(?=\s|$)/gm, '$1');
}

export interface AtmosLayout {
  /** The atmos.yaml that set it. */
  config: string;
  /** Archive directory of the Terraform components. */
  components: string;
  /** Archive directory of the stack manifests. */
  stacks: string;
  included: string[];
  excluded: string[];
  /** The vendoring manifest (`vendor.yaml`) beside the configuration, when there is one:
   * `atmos vendor pull` may fetch component directories the repository does not commit
   * (https://github.com/cloudposse/atmos/releases/tag/v1.47.0). */
  vendor: string | null;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.map(staticString).filter((s): s is string => s !== null) : [];
}

function get(obj: unknown, ...keys: string[]): unknown {
  let cur = obj;
  for (const k of keys) {
    if (!isRecord(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/**
 * Reads `atmos.yaml`. Paths are relative to where atmos runs, the repository root; the file sits
 * there or deeper (`rootfs/usr/local/etc/atmos/atmos.yaml`), so the first base (its directory,
 * then the archive's top) under which the components directory exists is taken.
 */
export function readAtmosConfig(
  file: DeclarationFile,
  hasDir: (dir: string) => boolean,
  hasFile: (path: string) => boolean,
  problems: DeclarationProblem[],
): AtmosLayout | null {
  const doc = readYaml('Atmos', file.path, file.text, problems);
  if (doc === null) return null;
  const top = isRecord(doc.value) ? doc.value : {};
  const basePath = staticString(top['base_path']) ?? '';
  const components = staticString(get(top, 'components', 'terraform', 'base_path')) ?? 'components/terraform';
  const stacks = staticString(get(top, 'stacks', 'base_path')) ?? 'stacks';
  const join = (base: string, p: string): string | null =>
    resolveDir(base, basePath === '' || p.startsWith('/') ? p : `${basePath}/${p}`);
  const bases = [...new Set([dirOf(file.path), '.'])];
  const base = bases.find((b) => {
    const c = join(b, components);
    return c !== null && hasDir(c);
  });
  const chosen = base ?? (bases[0] as string);
  const componentsDir = join(chosen, components);
  const stacksDir = join(chosen, stacks);
  if (componentsDir === null || stacksDir === null) return null;
  const vendor =
    ['vendor.yaml', 'vendor.yml']
      .map((n) => (chosen === '.' ? n : `${chosen}/${n}`))
      .find((p) => hasFile(p)) ?? null;
  return {
    vendor,
    config: file.path,
    components: componentsDir,
    stacks: stacksDir,
    included: strings(get(top, 'stacks', 'included_paths')),
    excluded: strings(get(top, 'stacks', 'excluded_paths')),
  };
}

/** Whether a YAML file is a stack manifest of the layout. */
export function isAtmosManifest(layout: AtmosLayout, path: string): boolean {
  if (!/\.ya?ml$/.test(path)) return false;
  const prefix = layout.stacks === '.' ? '' : `${layout.stacks}/`;
  if (!path.startsWith(prefix)) return false;
  const rel = path.slice(prefix.length);
  const noExt = rel.replace(/\.ya?ml$/, '');
  const matches = (g: string): boolean => matchGlob(g, rel) || matchGlob(g, noExt);
  if (layout.included.length > 0 && !layout.included.some(matches)) return false;
  return !layout.excluded.some(matches);
}

export function readAtmosManifest(
  layout: AtmosLayout,
  file: DeclarationFile,
): { roots: DeclaredRoot[]; problems: DeclarationProblem[] } {
  const roots: DeclaredRoot[] = [];
  const problems: DeclarationProblem[] = [];
  const doc: YamlDocument | null = readYaml('Atmos', file.path, withoutAtmosTags(file.text), problems);
  if (doc === null) return { roots, problems };
  const terraform = get(doc.value, 'components', 'terraform');
  if (terraform === undefined || terraform === null) return { roots, problems };
  if (!isRecord(terraform)) {
    problems.push(shapeProblem('Atmos', file.path, 1, '"components.terraform" is not a mapping'));
    return { roots, problems };
  }
  for (const [name, settings] of Object.entries(terraform)) {
    const metadata = isRecord(settings) ? settings['metadata'] : undefined;
    if (get(metadata, 'type') === 'abstract' || get(metadata, 'enabled') === false) continue;
    const component = staticString(get(metadata, 'component')) ?? (name.includes('{{') ? null : name);
    if (component === null) continue;
    const dir = resolveDir(layout.components, component);
    if (dir === null) continue;
    const line = doc.keyLine(terraform, name);
    const label =
      component === name ? `component "${name}"` : `component "${name}" (metadata.component "${component}")`;
    roots.push({
      tool: 'Atmos',
      dir,
      written: component,
      location: { file: file.path, line },
      label,
      ...(layout.vendor === null
        ? {}
        : { uncertain: `unless atmos vendor pull fetches it, as ${layout.vendor} may say` }),
    });
  }
  return { roots, problems };
}
