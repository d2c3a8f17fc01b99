import { EKS, editedRepo, lineIn, policyRuleTable, text } from '../support/policy-table';

const sources = (...globs: string[]) =>
  `module_sources = [${globs.map((g) => JSON.stringify(g)).join(', ')}]\n`;

policyRuleTable('policy-module-source', [
  {
    name: "the issue's globs allow the real repository's terraform-aws-modules calls",
    files: () => editedRepo(EKS),
    policy: sources('terraform-aws-modules/*', 'git::https://github.com/acme/*'),
    expected: [],
  },
  {
    name: 'a call no glob matches, at its source argument',
    files: () => editedRepo(EKS),
    policy: sources('terraform-aws-modules/vpc/*', 'terraform-aws-modules/eks/*'),
    expected: (files) => [
      {
        module: '.',
        file: 'main.tf',
        line: lineIn(
          text(files, 'main.tf'),
          'source',
          lineIn(text(files, 'main.tf'), 'module "irsa-ebs-csi"'),
        ),
        message:
          'module "irsa-ebs-csi" comes from "terraform-aws-modules/iam/aws//modules/iam-assumable-role-with-oidc", which matches none of the policy\'s module_sources',
      },
    ],
  },
  {
    name: 'local paths always pass; git sources are matched as written',
    files: () =>
      editedRepo(EKS, {
        'extra.tf':
          'module "local" {\n  source = "./modules/net"\n}\n\nmodule "ok" {\n  source = "git::https://github.com/acme/net.git?ref=v1.2.0"\n}\n\nmodule "other" {\n  source = "git::https://github.com/elsewhere/net.git?ref=v1"\n}\n',
        'modules/net/main.tf': 'variable "x" {\n  default = 1\n}\n',
      }),
    policy: sources('terraform-aws-modules/*', 'git::https://github.com/acme/*'),
    expected: [
      {
        module: '.',
        file: 'extra.tf',
        line: 10,
        message: 'module "other" comes from "git::https://github.com/elsewhere/net.git?ref=v1"',
      },
    ],
  },
  {
    name: 'no module_sources in the policy: nothing is restricted',
    files: () => editedRepo(EKS),
    policy: 'required_platforms = ["linux_amd64"]\n',
    expected: [],
  },
]);
