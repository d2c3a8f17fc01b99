/**
 * The message helpers of the lock rules (src/rules/lock-helpers.ts and src/addrs): how a provider is named (the
 * hostname is left out only for the default registry of the engine that applies) and which
 * command-line program notes name.
 */
import { shortSource } from '../../src/addrs';
import { cliName, pathFromRoot } from '../../src/rules/lock-helpers';
import type { Engine } from '../../src/model';

describe('shortSource', () => {
  const ROWS: Array<[source: string, engine: Engine, shown: string]> = [
    ['registry.terraform.io/hashicorp/aws', 'terraform', 'hashicorp/aws'],
    ['registry.terraform.io/hashicorp/aws', 'opentofu', 'registry.terraform.io/hashicorp/aws'],
    ['registry.opentofu.org/hashicorp/aws', 'opentofu', 'hashicorp/aws'],
    ['registry.opentofu.org/hashicorp/aws', 'terraform', 'registry.opentofu.org/hashicorp/aws'],
    ['tfe.example.com/acme/cloud', 'terraform', 'tfe.example.com/acme/cloud'],
    ['tfe.example.com/acme/cloud', 'opentofu', 'tfe.example.com/acme/cloud'],
    // A host that only ends like the default one is another registry.
    ['my-registry.terraform.io/acme/x', 'terraform', 'my-registry.terraform.io/acme/x'],
    ['terraform.io/builtin/terraform', 'terraform', 'terraform.io/builtin/terraform'],
    // Not a full address: shown as it is.
    ['hashicorp/aws', 'terraform', 'hashicorp/aws'],
  ];
  it.each(ROWS)('%s under %s → %s', (source, engine, shown) => {
    expect(shortSource(source, engine)).toBe(shown);
  });
});

describe('cliName', () => {
  it.each<[Engine, string]>([
    ['terraform', 'terraform'],
    ['opentofu', 'tofu'],
  ])('%s → %s', (engine, cli) => {
    expect(cliName(engine)).toBe(cli);
  });
});

describe('pathFromRoot', () => {
  it.each([
    ['.', 'terraform.d/plugins', 'terraform.d/plugins'],
    ['live/prod', 'live/prod/terraform.d/plugins', 'terraform.d/plugins'],
    ['live/prod', 'vendor/providers', '../../vendor/providers'],
    ['live/prod', 'live/prod', '.'],
  ])('root %s, %s → %s', (root, path, shown) => {
    expect(pathFromRoot(root, path)).toBe(shown);
  });
});
