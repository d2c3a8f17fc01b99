import { EKS, editedRepo, lineIn, policyRuleTable, text } from '../support/policy-table';

const L = '.terraform.lock.hcl';

policyRuleTable('policy-registry-denied', [
  {
    name: 'both public registries allowed: the real repository passes',
    files: () => editedRepo(EKS),
    policy: 'allowed_registries = ["registry.terraform.io", "registry.opentofu.org"]\n',
    expected: [],
  },
  {
    name: 'only a private mirror allowed: every declared provider, and the lock entries of those only remote modules require',
    files: () => editedRepo(EKS),
    policy: 'allowed_registries = ["registry.acme.example"]\n',
    expected: (files) => {
      const tf = text(files, 'terraform.tf');
      const lock = text(files, L);
      const declared = (name: string) => ({
        module: '.',
        file: 'terraform.tf',
        line: lineIn(tf, `${name} = {`),
        message: `provider "${name}" (hashicorp/${name}) is installed from registry.terraform.io, which the policy does not allow (allowed_registries: registry.acme.example)`,
      });
      const locked = (name: string) => ({
        module: '.',
        file: L,
        line: lineIn(lock, `hashicorp/${name}"`),
        message: `the lock file selects provider registry.terraform.io/hashicorp/${name} from registry.terraform.io, which the policy does not allow`,
      });
      return [
        locked('null'),
        locked('time'),
        declared('aws'),
        declared('random'),
        declared('tls'),
        declared('cloudinit'),
      ].sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
    },
  },
  {
    name: 'a provider from a private host the policy allows passes; the public ones do not',
    files: () =>
      editedRepo(EKS, {
        'terraform.tf': (t) =>
          t.replace('source  = "hashicorp/tls"', 'source  = "registry.acme.example/hashicorp/tls"'),
      }),
    policy: 'allowed_registries = ["registry.acme.example", "registry.terraform.io"]\n',
    expected: [],
  },
]);
