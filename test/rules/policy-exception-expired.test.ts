import { EKS, editedRepo, policyRuleTable } from '../support/policy-table';

const policy =
  'provider "hashicorp/random" {\n  deny   = true\n  reason = "use terraform_data"\n}\n' +
  'exception {\n  repository = "acme/*"\n  rule       = "policy-provider-denied"\n  reason     = "migration planned for Q1"\n  expires    = "2027-03-31"\n}\n';

policyRuleTable('policy-exception-expired', [
  {
    name: 'on its expiry date the exception still applies',
    files: () => editedRepo(EKS),
    policy,
    today: '2027-03-31',
    expected: [],
  },
  {
    name: 'the day after, it is reported at the exception in the policy file',
    files: () => editedRepo(EKS),
    policy,
    today: '2027-04-01',
    expected: [
      {
        module: '.',
        file: 'policy.hcl',
        line: 5,
        message:
          'the policy exception to policy-provider-denied for acme/eks (repository = "acme/*") expired on 2027-03-31, so it no longer applies; its reason was: "migration planned for Q1"',
      },
    ],
  },
  {
    name: "an expired exception for another repository is not this scan's business",
    files: () => editedRepo(EKS),
    policy,
    repository: 'other/repo',
    today: '2027-04-01',
    expected: [],
  },
  {
    name: 'without a known repository no exception applies, and none is reported',
    files: () => editedRepo(EKS),
    policy,
    repository: null,
    today: '2027-04-01',
    expected: [],
  },
]);
