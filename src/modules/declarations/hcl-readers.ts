/**
 * Declarations read from HCL files (parsed bodies in, declared roots out):
 *
 * - Terramate: a directory is a stack when one of its Terramate files (`*.tm.hcl`, `*.tm`) has a
 *   `stack {}` block (https://terramate.io/docs/cli/stacks/configuration); Terramate reads the
 *   files of non-hidden directories only (https://terramate.io/docs/cli/configuration/).
 * - HCP Terraform / Terraform Enterprise: a `tfe_workspace` resource's `working_directory` is the
 *   directory, relative to the root of its VCS repository, where runs execute
 *   (https://registry.terraform.io/providers/hashicorp/tfe/latest/docs/resources/workspace).
 * - Spacelift: a `spacelift_stack` resource's `project_root` is the directory, relative to the root
 *   of its repository, that the stack runs in
 *   (https://registry.terraform.io/providers/spacelift-io/spacelift/latest/docs/resources/stack).
 *
 * - env0: an `env0_template` resource's `path`, or the `path` in an `env0_environment`'s
 *   `without_template_settings` block, is the directory its runs execute in (see ENV0_ROOT_TYPES).
 *
 * These resources may name another repository (`vcs_repo`, `repository`): their roots are
 * `uncertain`: a directory this archive lacks is only likely missing.
 */
import type { HclBlock, HclBody, ParseResult } from '../../hcl';
import type { BlockSpec } from '../../hcl';
import type { DeclaredRoot } from './types';
import { dirOf, resolveDir } from './common';
import { staticString } from './yaml';

/** Why a directory that a resource or a workflow in another tool declares may exist elsewhere. */
export const ELSEWHERE = 'if it names this repository; it may name another one';

export const TERRAMATE_PROJECTION: BlockSpec = { blocks: { stack: { attributes: ['name', 'id'] } } };

export function isTerramateFile(path: string): boolean {
  if (!path.endsWith('.tm.hcl') && !path.endsWith('.tm')) return false;
  const dirs = path.split('/').slice(0, -1);
  return !dirs.some((d) => d.startsWith('.'));
}

/** A top-level `stack {` block in the text: files without one declare nothing and are not parsed. */
const STACK_BLOCK = /^stack\s*\{/m;

export function mayDeclareStack(text: string): boolean {
  return STACK_BLOCK.test(text);
}

/**
 * A Terramate file that tfguard's parser rejects while Terramate reads it (Terramate allows blocks
 * of one type with different label counts, `globals` and `globals "a" "b"`): the stack is found in
 * the text. Terramate validates its own files, so this is never reported as invalid.
 */
export function readTerramateText(path: string, text: string): DeclaredRoot[] {
  const m = STACK_BLOCK.exec(text);
  if (m === null) return [];
  const line = text.slice(0, m.index).split('\n').length;
  const dir = dirOf(path);
  return [{ tool: 'Terramate', dir, written: dir, location: { file: path, line }, label: 'stack block' }];
}

export function readTerramate(path: string, body: HclBody): DeclaredRoot[] {
  const stack = body.blocks.find((b) => b.type === 'stack');
  if (stack === undefined) return [];
  const name = staticString(stack.body.attributes.find((a) => a.name === 'name')?.value);
  const dir = dirOf(path);
  return [
    {
      tool: 'Terramate',
      dir,
      written: dir,
      location: { file: path, line: stack.line },
      label: name === null ? 'stack block' : `stack "${name}"`,
    },
  ];
}

/** The resource types whose arguments declare a root, and which argument (in a nested block for
 * `env0_environment`). */
export const DECLARING_RESOURCES: Readonly<
  Record<string, { attribute: string; block?: string; tool: DeclaredRoot['tool'] }>
> = {
  tfe_workspace: { attribute: 'working_directory', tool: 'HCP Terraform' },
  spacelift_stack: { attribute: 'project_root', tool: 'Spacelift' },
  env0_template: { attribute: 'path', tool: 'env0' },
  env0_environment: { attribute: 'path', block: 'without_template_settings', tool: 'env0' },
};

/**
 * env0 templates and template-less environments run the IaC tool their `type` names
 * (https://registry.terraform.io/providers/env0/env0/latest/docs/resources/template,
 * https://registry.terraform.io/providers/env0/env0/latest/docs/resources/environment): only
 * `terraform` (the default) and `opentofu` make `path` a root module. A `terragrunt` path holds
 * units, which tfguard finds by their `terragrunt.hcl`; other types (`pulumi`, `k8s`, `helm`,
 * `cloudformation`, `ansible`, `workflow`) are not Terraform.
 */
const ENV0_ROOT_TYPES: Readonly<Record<string, DeclaredRoot['engine']>> = {
  terraform: 'terraform',
  opentofu: 'opentofu',
};

export const RESOURCE_PROJECTION: BlockSpec = {
  blocks: {
    resource: {
      attributes: ['working_directory', 'project_root', 'path', 'type'],
      blocks: { without_template_settings: { attributes: ['path', 'type'] } },
    },
  },
};

const DECLARING_TYPES: ReadonlySet<string> = new Set(Object.keys(DECLARING_RESOURCES));

const DECLARING_NEEDLES: readonly Buffer[] = Object.keys(DECLARING_RESOURCES).map((t) =>
  Buffer.from(`"${t}"`),
);

/**
 * Whether a configuration file may hold a declaring resource (a cheap test before parsing): from
 * the module loader's parse of the file when there is one (every top-level block's type and
 * labels), else by looking for the quoted resource types in its bytes.
 */
export function mayDeclareResources(content: Buffer, parsed?: ParseResult): boolean {
  if (parsed !== undefined && parsed.ok) {
    // Asked of every configuration file of the archive: a plain loop over its top-level blocks.
    for (const b of parsed.file.body.blocks) {
      if (b.type === 'resource' && DECLARING_TYPES.has(b.labels[0] ?? '')) return true;
    }
    return false;
  }
  return DECLARING_NEEDLES.some((needle) => content.includes(needle));
}

export function readDeclaringResources(path: string, body: HclBody): DeclaredRoot[] {
  const out: DeclaredRoot[] = [];
  for (const b of body.blocks as HclBlock[]) {
    if (b.type !== 'resource') continue;
    const [type = '', name = ''] = b.labels;
    const spec = DECLARING_RESOURCES[type];
    if (spec === undefined) continue;
    const holder = spec.block === undefined ? b.body : b.body.blocks.find((x) => x.type === spec.block)?.body;
    if (holder === undefined) continue;
    let engine: DeclaredRoot['engine'];
    if (spec.tool === 'env0') {
      const typeAttr = holder.attributes.find((a) => a.name === 'type');
      const written = typeAttr === undefined ? 'terraform' : staticString(typeAttr.value);
      // An unknown type (`each.value.type`) may be any tool: nothing is declared.
      if (written === null || !Object.prototype.hasOwnProperty.call(ENV0_ROOT_TYPES, written)) continue;
      engine = ENV0_ROOT_TYPES[written];
    }
    const attr = holder.attributes.find((a) => a.name === spec.attribute);
    const written = staticString(attr?.value);
    if (attr === undefined || written === null) continue;
    const dir = resolveDir('.', written);
    if (dir === null) continue;
    const where = spec.block === undefined ? spec.attribute : `${spec.block}.${spec.attribute}`;
    out.push({
      tool: spec.tool,
      dir,
      written,
      location: { file: path, line: attr.line },
      label: `${type}.${name} ${where} "${written}"`,
      uncertain: ELSEWHERE,
      ...(engine === 'opentofu' ? { engine } : {}),
    });
  }
  return out;
}

/** CDKTF: `cdktf synth` writes each stack to `cdktf.out/stacks/<name>/cdk.tf.json`, a root module
 * that `cdktf deploy` runs terraform in (https://developer.hashicorp.com/terraform/cdktf/cli-reference/commands). */
export function readCdktf(paths: Iterable<string>): DeclaredRoot[] {
  const out: DeclaredRoot[] = [];
  for (const path of paths) {
    const m = /(^|\/)cdktf\.out\/stacks\/([^/]+)\/cdk\.tf\.json$/.exec(path);
    if (m === null) continue;
    out.push({
      tool: 'CDKTF',
      dir: dirOf(path),
      written: dirOf(path),
      location: { file: path, line: 1 },
      label: `synthesized stack "${m[2] as string}"`,
    });
  }
  return out;
}
