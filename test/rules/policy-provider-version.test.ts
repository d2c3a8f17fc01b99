import { EKS, editedRepo, lineIn, policyRuleTable, text } from '../support/policy-table';

const L = '.terraform.lock.hcl';
const aws = (versions: string) => `provider "hashicorp/aws" {\n  versions = "${versions}"\n}\n`;
/** terraform.tf's aws `version` line. */
const awsVersionLine = (files: Parameters<typeof text>[0]) =>
  lineIn(text(files, 'terraform.tf'), 'version', lineIn(text(files, 'terraform.tf'), 'aws = {'));
const lockVersionLine = (files: Parameters<typeof text>[0]) =>
  lineIn(text(files, L), 'version', lineIn(text(files, L), 'hashicorp/aws'));

policyRuleTable('policy-provider-version', [
  {
    name: 'the real lock (aws 5.47.0, "~> 5.47.0") within the allowed range: nothing',
    files: () => editedRepo(EKS),
    policy: aws('>= 5.40, < 7.0'),
    expected: [],
  },
  {
    name: 'the locked version outside the range is an error; the root constraint admitting others a warning, no fix when nothing fits',
    files: () => editedRepo(EKS),
    policy: aws('>= 5.50, < 7.0'),
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lockVersionLine(files),
        message:
          'the lock file selects hashicorp/aws 5.47.0, outside the versions the policy allows (">= 5.50, < 7.0", policy.hcl:1)',
      },
      {
        module: '.',
        file: 'terraform.tf',
        line: awsVersionLine(files),
        severity: 'warning',
        message:
          'root module\'s constraint "~> 5.47.0" for hashicorp/aws admits versions outside the ones the policy allows',
      },
    ],
  },
  {
    name: 'a root constraint wider than the policy: a warning whose fix narrows it to the intersection',
    files: () => editedRepo(EKS, { 'terraform.tf': (t) => t.replace('"~> 5.47.0"', '">= 5.0"') }),
    policy: aws('>= 5.40, < 7.0'),
    expected: (files) => [
      {
        module: '.',
        file: 'terraform.tf',
        line: awsVersionLine(files),
        severity: 'warning',
        message: 'root module\'s constraint ">= 5.0.0" for hashicorp/aws admits versions outside',
        fix: '>= 5.40, < 7.0',
      },
    ],
  },
  {
    name: "the narrowed constraint keeps the root's own pieces that are narrower",
    files: () => editedRepo(EKS, { 'terraform.tf': (t) => t.replace('"~> 5.47.0"', '"~> 5.0"') }),
    policy: aws('>= 5.40, < 7.0'),
    expected: (files) => [
      {
        module: '.',
        file: 'terraform.tf',
        line: awsVersionLine(files),
        severity: 'warning',
        message: 'admits versions outside',
        fix: '~> 5.0, >= 5.40',
      },
    ],
  },
  {
    name: 'no fix when the narrowed constraint would reject the locked version',
    files: () => editedRepo(EKS, { 'terraform.tf': (t) => t.replace('"~> 5.47.0"', '">= 5.0"') }),
    policy: aws('>= 5.48, < 7.0'),
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lockVersionLine(files),
        message: 'the lock file selects hashicorp/aws 5.47.0, outside the versions the policy allows',
      },
      {
        module: '.',
        file: 'terraform.tf',
        line: awsVersionLine(files),
        severity: 'warning',
        message: 'admits versions outside',
      },
    ],
  },
  {
    name: 'an exception for the provider keeps both findings, suppressed',
    files: () => editedRepo(EKS),
    policy:
      aws('>= 5.50, < 7.0') +
      'exception {\n  repository = "acme/eks"\n  rule = "policy-provider-version"\n  provider = "hashicorp/aws"\n  reason = "migration planned for Q1"\n  expires = "2027-03-31"\n}\n',
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lockVersionLine(files),
        message: 'outside the versions the policy allows',
        suppressed: 'migration planned for Q1',
      },
      {
        module: '.',
        file: 'terraform.tf',
        line: awsVersionLine(files),
        severity: 'warning',
        message: 'admits versions outside',
        suppressed: 'migration planned for Q1',
      },
    ],
  },
  {
    name: "a configured severity is the error's; the warning stays one step below it",
    files: () =>
      editedRepo(EKS, { '.tfguard.hcl': 'rule "policy-provider-version" { severity = "warning" }\n' }),
    policy: aws('>= 5.50, < 7.0'),
    expected: (files) => [
      {
        module: '.',
        file: L,
        line: lockVersionLine(files),
        severity: 'warning',
        message: 'outside the versions',
      },
      {
        module: '.',
        file: 'terraform.tf',
        line: awsVersionLine(files),
        severity: 'notice',
        message: 'admits versions outside',
      },
    ],
  },
]);
