import { EKS, editedRepo, lineIn, policyRuleTable, text } from '../support/policy-table';

const L = '.terraform.lock.hcl';
const deny = (address: string, reason: string) =>
  `provider "${address}" {\n  deny   = true\n  reason = "${reason}"\n}\n`;
const exception = (fields: string) => `exception {\n${fields}\n}\n`;

policyRuleTable('policy-provider-denied', [
  {
    name: 'a denied provider the root declares, quoting the reason (real repository and lock file)',
    files: () => editedRepo(EKS),
    policy: deny('hashicorp/random', 'use terraform_data and provider functions'),
    expected: (files) => [
      {
        module: '.',
        file: 'terraform.tf',
        line: lineIn(text(files, 'terraform.tf'), 'random = {'),
        message:
          'provider "random" (hashicorp/random) is denied by the policy (policy.hcl:1): "use terraform_data and provider functions"',
      },
    ],
  },
  {
    name: 'a denied provider only a remote module requires: reported at its lock entry',
    files: () => editedRepo(EKS),
    policy: deny('hashicorp/null', 'use terraform_data'),
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lineIn(text(files, L), 'provider "registry.terraform.io/hashicorp/null"'),
        message:
          'the lock file selects provider hashicorp/null, which the policy denies (policy.hcl:1): "use terraform_data"',
      },
    ],
  },
  {
    name: 'a provider block with another host does not match',
    files: () => editedRepo(EKS),
    policy: deny('registry.example.com/hashicorp/random', 'mirror only'),
    expected: [],
  },
  {
    name: 'an exception for the repository keeps the finding, suppressed with its reason',
    files: () => editedRepo(EKS),
    policy:
      deny('hashicorp/random', 'use terraform_data') +
      exception(
        '  repository = "acme/*"\n  rule = "policy-provider-denied"\n  provider = "hashicorp/random"\n  reason = "replaced in Q3"\n  expires = "2026-09-30"',
      ),
    expected: (files) => [
      {
        module: '.',
        file: 'terraform.tf',
        line: lineIn(text(files, 'terraform.tf'), 'random = {'),
        message: 'is denied by the policy',
        suppressed: 'replaced in Q3 (policy exception until 2026-09-30)',
      },
    ],
  },
  {
    name: 'an exception for another provider, another repository or past its date does not apply',
    files: () => editedRepo(EKS),
    today: '2026-10-01',
    policy:
      deny('hashicorp/random', 'use terraform_data') +
      exception(
        '  repository = "acme/*"\n  rule = "policy-provider-denied"\n  provider = "hashicorp/aws"\n  reason = "r"\n  expires = "2027-01-01"',
      ) +
      exception(
        '  repository = "other/eks"\n  rule = "policy-provider-denied"\n  reason = "r"\n  expires = "2027-01-01"',
      ) +
      exception(
        '  repository = "acme/eks"\n  rule = "policy-provider-denied"\n  reason = "r"\n  expires = "2026-09-30"',
      ),
    expected: (files) => [
      {
        module: '.',
        file: 'terraform.tf',
        line: lineIn(text(files, 'terraform.tf'), 'random = {'),
        message: 'is denied by the policy',
      },
    ],
  },
  {
    name: 'an inline annotation cannot accept a policy finding',
    files: () =>
      editedRepo(EKS, {
        'terraform.tf': (t) =>
          t.replace(
            '    random = {',
            '    # tfguard:ignore policy-provider-denied we like it\n    random = {',
          ),
      }),
    policy: deny('hashicorp/random', 'use terraform_data'),
    expected: (files) => [
      {
        module: '.',
        file: 'terraform.tf',
        line: lineIn(text(files, 'terraform.tf'), 'random = {'),
        message: 'is denied by the policy',
      },
    ],
  },
  {
    name: 'no deny in the policy: nothing',
    files: () => editedRepo(EKS),
    policy: 'provider "hashicorp/random" {\n  versions = ">= 3.0"\n}\n',
    expected: [],
  },
]);
