/**
 * Terraform Stacks. A Stack's directory holds its component configuration (`*.tfcomponent.hcl`,
 * `*.tfcomponent.json`) and deployment configuration (`*.tfdeploy.hcl`); the component
 * configuration replaces the root module (https://developer.hashicorp.com/terraform/language/files/stack,
 * https://developer.hashicorp.com/terraform/language/stacks/create/config):
 *
 * - `required_providers` is a top-level block of the component files
 *   (https://developer.hashicorp.com/terraform/language/block/stack/tfcomponent/required_providers);
 * - `provider "aws" "this" { config { … } }` configures a provider, the alias in its header
 *   (https://developer.hashicorp.com/terraform/language/stacks/create/declare-providers);
 * - `component "vpc" { source = "./aws-vpc" }` runs a module, shared by the Stack's deployments
 *   (https://developer.hashicorp.com/terraform/language/block/stack/tfcomponent/component);
 * - `terraform stacks providers-lock` writes `.terraform.lock.hcl` beside the component files
 *   (https://developer.hashicorp.com/terraform/cli/commands/stacks/providers-lock).
 *
 * So the Stack directory is read as a root module whose `required_providers` is that block and
 * whose module calls are its components: its lock file is verified against the components'
 * requirements like any root's. The public beta named component files `*.tfstack.hcl`
 * (https://developer.hashicorp.com/terraform/language/v1.12.x/block/stack/tfcomponent); current
 * Terraform reads only `*.tfcomponent.hcl`, so a leftover `*.tfstack.hcl` is reported.
 */
import type { BlockSpec, HclAttribute, HclBlock, HclBody } from '../../hcl';

export const STACK_COMPONENT_SUFFIXES = ['.tfcomponent.hcl', '.tfcomponent.json'];
export const STACK_DEPLOYMENT_SUFFIXES = ['.tfdeploy.hcl', '.tfdeploy.json'];
export const LEGACY_STACK_SUFFIX = '.tfstack.hcl';

export function isStackComponentFile(path: string): boolean {
  return STACK_COMPONENT_SUFFIXES.some((s) => path.endsWith(s));
}

export function isLegacyStackFile(path: string): boolean {
  return path.endsWith(LEGACY_STACK_SUFFIX);
}

export const STACK_PROJECTION: BlockSpec = {
  otherBlocks: true,
  blocks: {
    required_providers: { attributes: 'all' },
    component: { attributes: ['source', 'version'] },
    provider: { attributeNames: true, otherBlocks: true },
  },
};

/** A Stack: its directory and its component files, parsed with `STACK_PROJECTION`. */
export interface TerraformStack {
  dir: string;
  files: { path: string; body: HclBody }[];
  /** Component files that did not parse. */
  errors: { path: string; line: number; column: number; message: string }[];
}

/**
 * The component configuration as the module loader reads a root module's files: the top-level
 * `required_providers` inside a `terraform` block, each `component` as a `module` call (`source`
 * and `version`), each `provider "<name>" "<alias>"` as `provider "<name>" { alias = "<alias>" … }`.
 */
export function stackModuleBody(body: HclBody): HclBody {
  const blocks: HclBlock[] = [];
  for (const b of body.blocks) {
    if (b.type === 'required_providers') {
      blocks.push({ ...b, type: 'terraform', labels: [], body: { attributes: [], blocks: [b] } });
    } else if (b.type === 'component') {
      blocks.push({ ...b, type: 'module' });
    } else if (b.type === 'provider') {
      const [name = '', alias] = b.labels;
      const aliasAttr: HclAttribute[] =
        alias === undefined
          ? []
          : [
              {
                name: 'alias',
                value: alias,
                line: b.line,
                endLine: b.line,
                range: b.range,
                valueRange: b.range,
              },
            ];
      blocks.push({
        ...b,
        labels: [name],
        body: { attributes: [...aliasAttr, ...b.body.attributes], blocks: b.body.blocks },
      });
    }
  }
  return { attributes: [], blocks };
}
