/**
 * What module loading reads from a configuration file (see assemble.ts and collect.ts): every
 * top-level block's type, labels and lines (resource types imply providers), and these values:
 *
 * - `terraform`: `required_version`; `required_providers` blocks with all their entries; `backend`
 *   (its label) and `cloud` blocks;
 * - `provider`: `alias`, `version`;
 * - `module`: `source`, `version`, `providers`;
 * - `resource` / `data` / `ephemeral`: `provider`;
 * - `check`: its scoped `data` blocks' `provider`;
 * - `import`: `to`, `provider`;
 * - `language` (OpenTofu 1.12): `compatible_with` blocks' `opentofu`.
 *
 * Files are parsed with `HclParser.extract(path, content, LOADER_PROJECTION)`, so everything else
 * (resource bodies, variables, outputs, locals...) is checked for syntax but never evaluated.
 * Reading anything more in assemble.ts / collect.ts means adding it here (and the cache key
 * changes with it: `specFingerprint`).
 */
import type { BlockSpec } from '../hcl';

const RESOURCE: BlockSpec = { attributes: ['provider'] };

export const LOADER_PROJECTION: BlockSpec = {
  otherBlocks: true,
  blocks: {
    terraform: {
      attributes: ['required_version'],
      blocks: { required_providers: { attributes: 'all' }, backend: {}, cloud: {} },
    },
    // Every argument and nested block: whether a provider block configures anything or is an empty
    // proxy (`provider "aws" { alias = "x" }`) tells a deployment from a reusable module.
    provider: { attributes: ['alias', 'version'], attributeNames: true, otherBlocks: true },
    module: { attributes: ['source', 'version', 'providers'] },
    resource: RESOURCE,
    data: RESOURCE,
    ephemeral: RESOURCE,
    check: { blocks: { data: RESOURCE } },
    import: { attributes: ['to', 'provider'] },
    language: { blocks: { compatible_with: { attributes: ['opentofu'] } } },
  },
};

/**
 * What module loading reads a second time, only from the files of a module whose
 * `required_providers` reads variables or locals (Terraform 1.17): `variable` blocks' `default` and
 * `const`, and every local value (see constants.ts). Kept out of `LOADER_PROJECTION` so that
 * ordinary modules never pay for evaluating locals and defaults.
 */
export const CONSTANT_PROJECTION: BlockSpec = {
  blocks: {
    variable: { attributes: ['default', 'const'] },
    locals: { attributes: 'all' },
  },
};
