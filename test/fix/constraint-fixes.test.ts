/**
 * The constraint fixes, one table row per fix and syntax (`.tf`, `.tofu`, `.tf.json`), with comments,
 * odd spacing and CRLF around the edited range: `tfguard fix` runs on real files and every byte of
 * the result is compared. Each row then checks convergence: a scan of the fixed files has none of
 * the fixed findings, and a second `fix` changes nothing. Rows where the right value is in doubt
 * (no lock, a lock that disagrees, a guessed module kind) expect no change and a finding that says
 * what a person must do. Terraform is the oracle for the formatted rows: `terraform fmt -check`
 * passes before and after, and `terraform providers` reads the fixed requirements.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { scanPath } from '../../src/scan';
import { fixPath } from '../../src/scan/fix';
import { describeWithTerraform } from '../support/external';
import { cli } from '../support/cli';
import { readTextTree, runTerraform, writeTree } from '../support/terraform';

/** The files of a fixture directory as text (git's data aside). */
const tree = (dir: string): Promise<Record<string, string>> => readTextTree(dir, (name) => name === '.git');

const L = (...ls: string[]): string => `${ls.join('\n')}\n`;

/** A lock file as terraform init writes it (hashes are placeholders: no rule here reads them). */
function lock(entries: Record<string, string>, host = 'registry.terraform.io'): string {
  const blocks = Object.entries(entries).map(([source, version]) =>
    L(
      `provider "${host}/${source}" {`,
      `  version = "${version}"`,
      '  hashes = [',
      `    "h1:${'A'.repeat(43)}=",`,
      '  ]',
      '}',
    ),
  );
  return `# This file is maintained automatically by "terraform init".\n# Manual edits may be lost in future updates.\n\n${blocks.join('\n')}`;
}

/** `.terraform/modules/modules.json` as terraform init writes it. */
function modulesJson(mods: Record<string, [string, string]>): string {
  const list = [{ Key: '', Source: '', Dir: '.' }].concat(
    Object.entries(mods).map(([Key, [source, Version]]) => ({
      Key,
      Source: `registry.terraform.io/${source}`,
      Version,
      Dir: `.terraform/modules/${Key}`,
    })) as never[],
  );
  return JSON.stringify({ Modules: list });
}

/** A root (backend block: a root on strong evidence) that calls `../../modules/net`. */
const ROOT_CALLING_NET = L(
  'terraform {',
  '  backend "local" {}',
  '  required_providers {',
  '    aws = {',
  '      source  = "hashicorp/aws"',
  '      version = "~> 5.0"',
  '    }',
  '  }',
  '}',
  '',
  'module "net" {',
  '  source = "../../modules/net"',
  '}',
);

interface Case {
  name: string;
  files: Record<string, string>;
  /** The exact text of every file the fix changes; every other file must stay as it was. */
  changed: Record<string, string>;
  /** Rules whose findings the fix removes (checked by a scan after it). */
  fixes: string[];
  /** Rules whose findings stay (no fix), with a substring of the note that says what to do. */
  stays?: [rule: string, note: string][];
  /** `terraform fmt -check` passes before and after (the input is formatted). */
  formatted?: boolean;
}

const CASES: Case[] = [
  // root-module-unbounded ------------------------------------------------------------------------
  {
    name: 'root-module-unbounded (.tf): the locked version sets the release line; comments stay',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version =   ">= 5.1"  # floor we tested',
        '    }',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
    },
    changed: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version =   "~> 5.40"  # floor we tested',
        '    }',
        '  }',
        '}',
      ),
    },
    fixes: ['root-module-unbounded'],
  },
  {
    name: 'root-module-unbounded (.tofu, OpenTofu lock): a higher minimum and an exclusion are kept',
    files: {
      'main.tofu': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = ">= 5.40.2, != 5.41.0" } /* keep */',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }, 'registry.opentofu.org'),
    },
    changed: {
      'main.tofu': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.40, >= 5.40.2, != 5.41.0" } /* keep */',
        '  }',
        '}',
      ),
    },
    fixes: ['root-module-unbounded'],
  },
  {
    name: 'root-module-unbounded (.tf.json): the JSON string is replaced in place',
    files: {
      'main.tf.json':
        '{"terraform": {\n  "backend": {"local": {}},\n  "required_providers": {"aws": {"source": "hashicorp/aws",\n     "version":">= 5.1"}}}}\n',
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
    },
    changed: {
      'main.tf.json':
        '{"terraform": {\n  "backend": {"local": {}},\n  "required_providers": {"aws": {"source": "hashicorp/aws",\n     "version":"~> 5.40"}}}}\n',
    },
    fixes: ['root-module-unbounded'],
  },
  {
    name: 'root-module-unbounded: a lock the bounded constraint would reject gets no fix',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version = ">= 5.1"',
        '    }',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '6.2.0-beta1' }),
    },
    changed: {},
    fixes: [],
    stays: [['root-module-unbounded', 'locks version 6.2.0-beta1']],
  },
  // missing-version-constraint -------------------------------------------------------------------
  {
    name: 'missing-version-constraint (.tf, root): ~> of the locked version, joining fmt alignment',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    # the cloud',
        '    aws = {',
        '      source = "hashicorp/aws" # the lock pins it',
        '    }',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
    },
    changed: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    # the cloud',
        '    aws = {',
        '      source  = "hashicorp/aws" # the lock pins it',
        '      version = "~> 5.40"',
        '    }',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-version-constraint'],
    formatted: true,
  },
  {
    name: 'missing-version-constraint (.tf, CRLF): the new line ends in CRLF too',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = {',
        '      source = "hashicorp/aws"',
        '    }',
        '  }',
        '}',
      ).replace(/\n/g, '\r\n'),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
    },
    changed: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version = "~> 5.40"',
        '    }',
        '  }',
        '}',
      ).replace(/\n/g, '\r\n'),
    },
    fixes: ['missing-version-constraint'],
  },
  {
    name: 'missing-version-constraint (.tofu, one-line entry): inserted inline after the source',
    files: {
      'main.tofu': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws" } # one line',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }, 'registry.opentofu.org'),
    },
    changed: {
      'main.tofu': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.40" } # one line',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-version-constraint'],
    formatted: true,
  },
  {
    name: 'missing-version-constraint (.tf.json, root): a property with its comma and indentation',
    files: {
      'main.tf.json': L(
        '{',
        '  "terraform": {',
        '    "backend": {"local": {}},',
        '    "required_providers": {',
        '      "aws": {',
        '        "source": "hashicorp/aws"',
        '      }',
        '    }',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
    },
    changed: {
      'main.tf.json': L(
        '{',
        '  "terraform": {',
        '    "backend": {"local": {}},',
        '    "required_providers": {',
        '      "aws": {',
        '        "source": "hashicorp/aws",',
        '        "version": "~> 5.40"',
        '      }',
        '    }',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-version-constraint'],
  },
  {
    name: 'missing-version-constraint (shared): >= the lowest version the roots that use it lock',
    files: {
      'live/a/main.tf': ROOT_CALLING_NET,
      'live/a/.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
      'live/b/main.tf': ROOT_CALLING_NET,
      'live/b/.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.31.0' }),
      'modules/net/versions.tf': L(
        'terraform {',
        '  required_providers {',
        '    aws = {',
        '      source = "hashicorp/aws"',
        '',
        '      # callers pass aws.peer',
        '      configuration_aliases = [aws.peer]',
        '    }',
        '  }',
        '}',
      ),
      'modules/net/main.tf': L('resource "aws_vpc" "x" {', '  provider = aws.peer', '}'),
    },
    changed: {
      'modules/net/versions.tf': L(
        'terraform {',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version = ">= 5.31.0"',
        '',
        '      # callers pass aws.peer',
        '      configuration_aliases = [aws.peer]',
        '    }',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-version-constraint'],
    formatted: true,
  },
  {
    name: 'missing-version-constraint (shared): a root without a lock leaves the version to a person',
    files: {
      'live/a/main.tf': ROOT_CALLING_NET,
      'live/a/.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
      'live/b/main.tf': ROOT_CALLING_NET,
      'modules/net/versions.tf': L(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws" }',
        '  }',
        '}',
      ),
    },
    changed: {},
    fixes: [],
    stays: [['missing-version-constraint', 'no fix: root "live/b" that uses it locks no version of it']],
  },
  {
    name: 'missing-version-constraint: a module whose kind is a guess gets no fix',
    files: {
      'live/a/main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version = "~> 5.0"',
        '    }',
        '  }',
        '}',
      ),
      'live/a/.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
      // Nothing calls it: shared on weak evidence (a path segment "modules").
      'modules/net/versions.tf': L(
        'terraform {',
        '  required_providers {',
        '    aws = {',
        '      source = "hashicorp/aws"',
        '    }',
        '  }',
        '}',
      ),
    },
    changed: {},
    fixes: [],
    stays: [['missing-version-constraint', 'no fix: tfguard\'s guess of what "modules/net" is']],
  },
  // missing-provider-source ----------------------------------------------------------------------
  {
    name: 'missing-provider-source (.tf): the source the lock records, first, ahead of comments',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    random = {',
        '      # any 3.6.x',
        '      version = "~> 3.6"',
        '    }',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/random': '3.6.2' }),
    },
    changed: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    random = {',
        '      source = "hashicorp/random"',
        '      # any 3.6.x',
        '      version = "~> 3.6"',
        '    }',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-provider-source'],
    formatted: true,
  },
  {
    name: 'missing-provider-source (.tofu): an aligned entry is re-aligned around the source',
    files: {
      'main.tofu': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    random = {',
        '      version = "~> 3.6" # tested',
        '    }',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/random': '3.6.2' }, 'registry.opentofu.org'),
    },
    changed: {
      'main.tofu': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    random = {',
        '      source  = "hashicorp/random"',
        '      version = "~> 3.6" # tested',
        '    }',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-provider-source'],
    formatted: true,
  },
  {
    name: 'missing-provider-source (.tf.json, legacy string): rewritten as an object, version as written',
    files: {
      'main.tf.json':
        '{\n  "terraform": {\n    "backend": {"local": {}},\n    "required_providers": {"tls":   "~> 4.0"}\n  }\n}\n',
      '.terraform.lock.hcl': lock({ 'hashicorp/tls': '4.0.5' }),
    },
    changed: {
      'main.tf.json':
        '{\n  "terraform": {\n    "backend": {"local": {}},\n    "required_providers": {"tls":   {"source": "hashicorp/tls", "version": "~> 4.0"}}\n  }\n}\n',
    },
    fixes: ['missing-provider-source'],
  },
  {
    name: 'missing-provider-source: no lock entry shows the assumed provider, so no fix',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    sops = { version = "~> 1.0" }',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'carlpett/sops': '1.0.0' }),
    },
    changed: {},
    fixes: [],
    stays: [['missing-provider-source', 'Write the source of the provider you mean (no fix:']],
  },
  {
    name: 'an empty entry gets both source and version: overlapping fixes converge in one run',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = {} # filled in by tfguard fix',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
    },
    changed: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = "~> 5.40" } # filled in by tfguard fix',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-provider-source', 'missing-version-constraint'],
    formatted: true,
  },
  // missing-configuration-alias ------------------------------------------------------------------
  {
    name: 'missing-configuration-alias (.tf): every missing alias joins the multi-line list',
    files: {
      'live/a/main.tf': ROOT_CALLING_NET,
      'live/a/.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3' }),
      'modules/net/versions.tf': L(
        'terraform {',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version = ">= 5.0"',
        '      configuration_aliases = [',
        '        aws.east,',
        '      ]',
        '    }',
        '  }',
        '}',
      ),
      'modules/net/main.tf': L(
        'resource "aws_vpc" "e" { provider = aws.east }',
        'resource "aws_vpc" "w" { provider = aws.west }',
        'resource "aws_vpc" "p" { provider = aws.peer }',
      ),
    },
    changed: {
      'modules/net/versions.tf': L(
        'terraform {',
        '  required_providers {',
        '    aws = {',
        '      source  = "hashicorp/aws"',
        '      version = ">= 5.0"',
        '      configuration_aliases = [',
        '        aws.east,',
        '        aws.peer,',
        '        aws.west,',
        '      ]',
        '    }',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-configuration-alias'],
    formatted: true,
  },
  {
    name: 'missing-configuration-alias (.tofu, one-line entry): a new configuration_aliases item',
    files: {
      'live/a/main.tf': ROOT_CALLING_NET,
      'modules/net/versions.tofu': L(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = ">= 5.0" } // shared',
        '  }',
        '}',
      ),
      'modules/net/main.tofu': L('resource "aws_vpc" "p" {', '  provider = aws.peer', '}'),
    },
    changed: {
      'modules/net/versions.tofu': L(
        'terraform {',
        '  required_providers {',
        '    aws = { source = "hashicorp/aws", version = ">= 5.0", configuration_aliases = [aws.peer] } // shared',
        '  }',
        '}',
      ),
    },
    fixes: ['missing-configuration-alias'],
  },
  {
    name: 'missing-configuration-alias (.tf.json): the JSON list gets a string',
    files: {
      'live/a/main.tf': ROOT_CALLING_NET,
      'modules/net/versions.tf.json':
        '{"terraform": {"required_providers": {"aws": {\n  "source": "hashicorp/aws", "version": ">= 5.0",\n  "configuration_aliases": ["aws.east"]}}}}\n',
      'modules/net/main.tf': L(
        'resource "aws_vpc" "e" { provider = aws.east }',
        'resource "aws_vpc" "p" { provider = aws.peer }',
      ),
    },
    changed: {
      'modules/net/versions.tf.json':
        '{"terraform": {"required_providers": {"aws": {\n  "source": "hashicorp/aws", "version": ">= 5.0",\n  "configuration_aliases": ["aws.east", "aws.peer"]}}}}\n',
    },
    fixes: ['missing-configuration-alias'],
  },
  // module-version-missing -----------------------------------------------------------------------
  {
    name: 'module-version-missing (.tf, root): ~> of the version modules.json records, aligned',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '}',
        '',
        'module "vpc" {',
        '  source = "terraform-aws-modules/vpc/aws" # registry',
        '  cidr   = "10.0.0.0/16"',
        '}',
      ),
      '.terraform/modules/modules.json': modulesJson({ vpc: ['terraform-aws-modules/vpc/aws', '5.8.1'] }),
    },
    changed: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '}',
        '',
        'module "vpc" {',
        '  source  = "terraform-aws-modules/vpc/aws" # registry',
        '  version = "~> 5.8"',
        '  cidr    = "10.0.0.0/16"',
        '}',
      ),
    },
    fixes: ['module-version-missing'],
    formatted: true,
  },
  {
    name: 'module-version-missing (.tf): aligned trailing comments follow fmt when the run splits',
    files: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '}',
        '',
        'module "vpc" {',
        '  source = "terraform-aws-modules/vpc/aws" # registry',
        '  cidr   = "10.0.0.0/16"                   # network',
        '  azs    = ["a", "b"]                      # zones',
        '}',
      ),
      '.terraform/modules/modules.json': modulesJson({ vpc: ['terraform-aws-modules/vpc/aws', '5.8.1'] }),
    },
    changed: {
      'main.tf': L(
        'terraform {',
        '  backend "local" {}',
        '}',
        '',
        'module "vpc" {',
        '  source  = "terraform-aws-modules/vpc/aws" # registry',
        '  version = "~> 5.8"',
        '  cidr    = "10.0.0.0/16" # network',
        '  azs     = ["a", "b"]    # zones',
        '}',
      ),
    },
    fixes: ['module-version-missing'],
    formatted: true,
  },
  {
    name: 'module-version-missing (.tf.json, shared): >= the lowest version the roots installed',
    files: {
      'live/a/main.tf': ROOT_CALLING_NET,
      'live/a/.terraform/modules/modules.json': modulesJson({
        net: ['../../modules/net', '0.0.0'],
        'net.vpc': ['terraform-aws-modules/vpc/aws', '5.8.1'],
      }),
      'live/b/main.tf': ROOT_CALLING_NET,
      'live/b/.terraform/modules/modules.json': modulesJson({
        'net.vpc': ['terraform-aws-modules/vpc/aws', '5.1.2'],
      }),
      'modules/net/main.tf.json': '{"module": {"vpc": {"source": "terraform-aws-modules/vpc/aws"}}}\n',
    },
    changed: {
      'modules/net/main.tf.json':
        '{"module": {"vpc": {"source": "terraform-aws-modules/vpc/aws", "version": ">= 5.1.2"}}}\n',
    },
    fixes: ['module-version-missing'],
  },
  {
    name: 'module-version-missing (.tofu): without modules.json the version is a person’s call',
    files: {
      'main.tofu': L(
        'terraform {',
        '  backend "local" {}',
        '}',
        'module "vpc" {',
        '  source = "terraform-aws-modules/vpc/aws"',
        '}',
      ),
    },
    changed: {},
    fixes: [],
    stays: [['module-version-missing', 'no fix: root "." has no .terraform/modules/modules.json']],
  },
];

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-cfix-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** The rules whose fixes edit configuration files: this table is about them. Lock files follow the
 * constraints these fixes write in the same run (see the test below); here they stay untouched. */
const CONSTRAINT_RULES = [
  'root-module-unbounded',
  'shared-module-upper-bound',
  'missing-version-constraint',
  'missing-provider-source',
  'missing-configuration-alias',
  'module-version-missing',
];
const ONLY_CONSTRAINTS = CONSTRAINT_RULES.flatMap((r) => ['--rule', r]);

describe('constraint fixes', () => {
  it('fixes that overlap are applied by a second pass over the edited files in memory', async () => {
    const c = CASES.find((x) => x.name.startsWith('an empty entry')) as Case;
    await writeTree(tmp, c.files);
    const outcome = await fixPath(tmp, { rules: new Set(CONSTRAINT_RULES) });
    expect(outcome.after).not.toBeNull();
    expect(outcome.fixed.map((f) => f.ruleId).sort()).toEqual(c.fixes);
    expect(outcome.changes.map((ch) => [ch.path, ch.after.toString('utf8')])).toEqual(
      Object.entries(c.changed),
    );
    expect(await tree(tmp)).toEqual(c.files); // fixPath writes nothing
  });

  it('with every rule, the lock file records the new constraint in the same run', async () => {
    const c = CASES.find((k) => k.name.startsWith('root-module-unbounded (.tf): the locked version')) as Case;
    await writeTree(tmp, c.files);
    const first = await cli(['fix', tmp]);
    expect(first.stdout).toContain('lock-constraints-drift');
    const files = await tree(tmp);
    // The configuration as the table expects it, and a lock that records its constraint.
    for (const [file, text] of Object.entries(c.changed)) expect(files[file]).toBe(text);
    expect(files['.terraform.lock.hcl']).toMatch(/^ {2}constraints = "~> 5\.40"$/m);
    const after = await scanPath(tmp);
    expect(after.findings.filter((f) => f.ruleId.startsWith('lock-'))).toEqual([]);
    const second = await cli(['fix', tmp]);
    expect(second.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    await writeTree(tmp, c.files);
    const before = await scanPath(tmp);
    for (const rule of c.fixes) expect(before.findings.map((f) => f.ruleId)).toContain(rule);
    const first = await cli(['fix', tmp, ...ONLY_CONSTRAINTS]);
    expect(first.stderr).toBe('');
    // Exactly the expected bytes in the changed files, every other file untouched.
    expect(await tree(tmp)).toEqual({ ...c.files, ...c.changed });
    // Converged: the fixed findings are gone, and a second run changes nothing.
    const after = await scanPath(tmp);
    for (const rule of c.fixes) expect(after.findings.filter((f) => f.ruleId === rule)).toEqual([]);
    for (const [rule, note] of c.stays ?? []) {
      const left = after.findings.filter((f) => f.ruleId === rule);
      expect(left).toEqual([expect.objectContaining({ note: expect.stringContaining(note) })]);
      expect(left[0]?.fix?.edits).toBeUndefined();
      expect(first.stdout).toContain(note);
    }
    const second = await cli(['fix', tmp, ...ONLY_CONSTRAINTS]);
    expect(second.stdout).toMatch(/^tfguard fix: fixed 0 findings in 0 files/);
    expect(await tree(tmp)).toEqual({ ...c.files, ...c.changed });
  });
});

/** `terraform fmt -check -diff` over the configuration files of `dir`; `.tofu` files are checked
 * under a `.tf` name (terraform fmt reads the same syntax but skips that extension). */
async function fmtCheck(dir: string): Promise<[number | null, string]> {
  const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'tfguard-fmt-'));
  try {
    const files = await tree(dir);
    const configs: Record<string, string> = {};
    for (const [p, text] of Object.entries(files)) {
      if (p.endsWith('.tf')) configs[p] = text;
      else if (p.endsWith('.tofu')) configs[`${p.slice(0, -'.tofu'.length)}.tf`] = text;
    }
    expect(Object.keys(configs).length).toBeGreaterThan(0);
    await writeTree(copy, configs);
    const res = await runTerraform(['fmt', '-check', '-recursive', '-diff'], copy);
    return [res.code, res.stdout];
  } finally {
    await fs.rm(copy, { recursive: true, force: true });
  }
}

describeWithTerraform('constraint fixes: terraform as the oracle', () => {
  const formatted = CASES.filter((c) => c.formatted === true);
  it.each(formatted.map((c) => [c.name, c] as const))('%s: fmt -check before and after', async (_n, c) => {
    await writeTree(tmp, c.files);
    expect(await fmtCheck(tmp)).toEqual([0, '']);
    await cli(['fix', tmp, ...ONLY_CONSTRAINTS]);
    expect(await fmtCheck(tmp)).toEqual([0, '']);
  });

  it('terraform providers reads the inserted versions, sources and aliases', async () => {
    // No backend (terraform providers would ask for init) and no lock with fake hashes: a root
    // that calls a local module is a root on strong evidence; its lock records real versions.
    const files = {
      'main.tf': L(
        'terraform {',
        '  required_providers {',
        '    aws = {',
        '      source = "hashicorp/aws"',
        '    }',
        '    random = {',
        '      version = ">= 3.1"',
        '    }',
        '  }',
        '}',
        '',
        'module "net" {',
        '  source = "./modules/net"',
        '  providers = {',
        '    aws.peer = aws',
        '  }',
        '}',
      ),
      '.terraform.lock.hcl': lock({ 'hashicorp/aws': '5.40.3', 'hashicorp/random': '3.6.2' }),
      'modules/net/versions.tf.json':
        '{"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws"}}}}\n',
      'modules/net/main.tf': L('resource "aws_vpc" "p" {', '  provider = aws.peer', '}'),
    };
    await writeTree(tmp, files);
    const res = await cli(['fix', tmp, ...ONLY_CONSTRAINTS]);
    expect(res.stdout).toMatch(/^tfguard fix: fixed 5 findings in 2 files/);
    expect(await fmtCheck(tmp)).toEqual([0, '']);
    // The lock served the fix; terraform providers would want its (fake) packages installed.
    await fs.rm(path.join(tmp, '.terraform.lock.hcl'));
    expect((await runTerraform(['get'], tmp)).code).toBe(0);
    const providers = await runTerraform(['providers'], tmp);
    expect([providers.code, providers.stderr]).toEqual([0, '']);
    expect(providers.stdout).toContain('provider[registry.terraform.io/hashicorp/aws] ~> 5.40');
    expect(providers.stdout).toContain('provider[registry.terraform.io/hashicorp/random] ~> 3.6');
    expect(providers.stdout).toMatch(
      /module\.net[\s\S]*provider\[registry\.terraform\.io\/hashicorp\/aws\] >= 5\.40\.3/,
    );
  });
});
