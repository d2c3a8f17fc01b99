/**
 * One table per classification signal (src/modules/classification/signals/*.ts): what the signal
 * alone says about each module of a small tree, null where it says nothing. The precedence between
 * signals is their order in SIGNALS, tested here and by test/modules/classification.test.ts.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { SIGNALS } from '../../../src/modules';
import { signalTable, closeParser } from '../../support/classification';
import { settings } from '../../../src/modules/classification/signals/settings';
import { deploymentDeclaration } from '../../../src/modules/classification/signals/deployment-declaration';
import { terragruntUnit } from '../../../src/modules/classification/signals/terragrunt-unit';
import { terragruntTemplate } from '../../../src/modules/classification/signals/terragrunt-template';
import { generateSource } from '../../../src/modules/classification/signals/generate-source';
import { generatedCopy } from '../../../src/modules/classification/signals/generated-copy';
import { templateFiles } from '../../../src/modules/classification/signals/template-files';
import { mixinFiles } from '../../../src/modules/classification/signals/mixin-files';
import { linkedFiles } from '../../../src/modules/classification/signals/linked-files';
import { scannerFixture } from '../../../src/modules/classification/signals/scanner-fixture';
import { indirectCall } from '../../../src/modules/classification/signals/indirect-call';
import { testHelper } from '../../../src/modules/classification/signals/test-helper';
import { terragruntSource } from '../../../src/modules/classification/signals/terragrunt-source';
import { localCalls } from '../../../src/modules/classification/signals/local-calls';
import { backend } from '../../../src/modules/classification/signals/backend';
import { examplePlace } from '../../../src/modules/classification/signals/example-place';
import { testPlace } from '../../../src/modules/classification/signals/test-place';
import { wrapper } from '../../../src/modules/classification/signals/wrapper';
import { readmeUsage } from '../../../src/modules/classification/signals/readme-usage';
import { privateModulesPlace } from '../../../src/modules/classification/signals/private-modules-place';
import { nothingToDeploy } from '../../../src/modules/classification/signals/nothing-to-deploy';
import { lockFile } from '../../../src/modules/classification/signals/lock-file';
import { undeclaredProject } from '../../../src/modules/classification/signals/undeclared-project';
import { deploymentPlace } from '../../../src/modules/classification/signals/deployment-place';
import { topDirectory } from '../../../src/modules/classification/signals/top-directory';
import { providerConfiguration } from '../../../src/modules/classification/signals/provider-configuration';
import { moduleLibrary } from '../../../src/modules/classification/signals/module-library';
import { modulesPlace } from '../../../src/modules/classification/signals/modules-place';
import { uncalled } from '../../../src/modules/classification/signals/uncalled';

afterAll(closeParser);

const R = 'resource "aws_s3_bucket" "b" {}\n';
const P = 'provider "aws" {\n  region = "eu-west-2"\n}\n';
const PROXY = 'provider "aws" {\n  alias = "peer"\n}\n';
const B = 'terraform {\n  backend "s3" {}\n}\n';
const call = (name: string, source: string): string => `module "${name}" {\n  source = "${source}"\n}\n`;
const LOCK =
  'provider "registry.terraform.io/hashicorp/aws" {\n  version = "5.9.0"\n  hashes = [\n    "h1:' +
  'A'.repeat(43) +
  '=",\n  ]\n}\n';

test('every signal has a unique id and a paragraph in docs/classification.md', async () => {
  const ids = SIGNALS.map((s) => s.id);
  expect(new Set(ids).size).toBe(ids.length);
  const doc = await fs.readFile(path.join(__dirname, '../../../docs/classification.md'), 'utf8');
  // Listed in the docs in the order of SIGNALS.
  const positions = ids.map((id) => doc.indexOf(`(\`${id}\`)`));
  expect(ids.filter((_, i) => positions[i] === -1)).toEqual([]);
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);
});

signalTable(settings, [
  {
    name: 'globs of each kind, roots first',
    files: { 'a/main.tf': R, 'b/main.tf': R, 'c/x/main.tf': R, 'd/main.tf': R },
    config: { roots: ['a', 'b'], shared: ['b', 'c/**'], fragments: ['d'] },
    expect: { a: 'root/strong', b: 'root/strong', 'c/x': 'shared/strong', d: 'fragment/strong' },
    reason: /pattern ".*" of the settings/,
  },
  {
    name: 'examples and tests globs; no glob, no decision',
    files: { 'e/main.tf': R, 't/main.tf': R, 'u/main.tf': R },
    config: { examples: ['e'], tests: ['t'] },
    expect: { e: 'example/strong', t: 'test/strong', u: null },
  },
]);

signalTable(deploymentDeclaration, [
  {
    name: 'declared directories are roots, whatever their place; others say nothing',
    files: {
      'atlantis.yaml': 'projects:\n  - name: net\n    dir: modules/net\n',
      'modules/net/main.tf': R,
      'modules/lib/main.tf': R,
      'stacks/a/stack.tm.hcl': 'stack {\n}\n',
      'stacks/a/main.tf': R,
      'stack/components.tfcomponent.hcl': call('s3', './s3').replace('module', 'component'),
      'stack/s3/main.tf': R,
    },
    expect: {
      'modules/net': 'root/strong',
      'modules/lib': null,
      'stacks/a': 'root/strong',
      stack: 'root/strong',
      'stack/s3': null,
    },
    reason:
      /^declared by (Atlantis: atlantis\.yaml:3 project "net"|Terramate: stacks\/a\/stack\.tm\.hcl:1 stack block|Terraform Stacks: stack\/components\.tfcomponent\.hcl:1 Stack component configuration \(1 component\))$/,
  },
]);

signalTable(terragruntUnit, [
  {
    name: 'a terragrunt.hcl directory is a root; its source is not',
    files: {
      'live/app/terragrunt.hcl': 'terraform {\n  source = "../../mod"\n}\n',
      'live/app/main.tf': R,
      'mod/main.tf': R,
    },
    expect: { 'live/app': 'root/strong', mod: null },
    reason: /Terragrunt unit/,
  },
]);

signalTable(terragruntTemplate, [
  {
    name: 'a catalog unit reading values.* is a template; a unit that does not is not',
    files: {
      'catalog/units/app/terragrunt.hcl':
        'terraform {\n  source = "../../modules//app"\n}\ninputs = {\n  name = values.name\n}\n',
      'catalog/units/app/main.tf': R,
      'live/app/terragrunt.hcl': 'terraform {\n  source = "../../catalog/modules//app"\n}\n',
      'live/app/main.tf': R,
    },
    expect: { 'catalog/units/app': 'fragment/strong', 'live/app': null },
    reason: /catalog unit: catalog\/units\/app\/terragrunt.hcl reads values/,
  },
]);

signalTable(generateSource, [
  {
    name: 'files copied in by generate blocks are a fragment',
    files: {
      'live/a/terragrunt.hcl':
        'generate "provider" {\n  path = "provider.tf"\n  contents = file("../../common/provider.tf")\n}\n',
      'common/provider.tf': P,
      'other/main.tf': P,
    },
    expect: { common: 'fragment/strong', other: null },
    reason: /generate blocks \(live\/a\)/,
  },
]);

signalTable(generatedCopy, [
  {
    name: 'only when every file says "Generated by Terragrunt"',
    files: {
      'gen/provider.tf': `# Generated by Terragrunt. Sig: nIlQXj57tbuaRZEa\n${P}`,
      'mixed/provider.tf': `# Generated by Terragrunt. Sig: nIlQXj57tbuaRZEa\n${P}`,
      'mixed/main.tf': R,
    },
    expect: { gen: 'fragment/strong', mixed: null },
  },
]);

signalTable(templateFiles, [
  {
    name: 'files that do not parse and hold {% %} / {{ }}',
    files: {
      'templates/main.tf': 'resource "aws_s3_bucket" "{{ name }}" {\n  {% for x in y %}\n}\n',
      'broken/main.tf': 'resource "aws_s3_bucket" "b" {\n',
    },
    expect: { templates: 'fragment/strong', broken: null },
  },
]);

signalTable(mixinFiles, [
  {
    name: 'a mixins directory or *.mixin.tf files only',
    files: { 'mixins/main.tf': R, 'm/infra.mixin.tf': R, 'n/infra.mixin.tf': R, 'n/main.tf': R },
    expect: { mixins: 'fragment/strong', m: 'fragment/strong', n: null },
  },
]);

signalTable(linkedFiles, [
  {
    name: 'every file the target of a symbolic link elsewhere',
    files: {
      'shared/providers.tf': P,
      'a/main.tf': R,
    },
    links: { 'a/providers.tf': '../shared/providers.tf' },
    expect: { shared: 'fragment/strong', a: null },
  },
]);

signalTable(scannerFixture, [
  {
    name: 'KICS query samples beside their expected results are a fragment; look-alikes are not',
    files: {
      // https://github.com/Checkmarx/kics/blob/master/docs/creating-queries.md ("Test Folder")
      'q/a/test/positive1.tf': R,
      'q/a/test/negative1.tf': R,
      'q/a/test/positive_expected_result.json': '[]\n',
      'q/b/test/positive1/main.tf': R,
      'q/b/test/positive_expected_result.json': '[]\n',
      // A sample name without expected results, and a real file beside expected results.
      'c/positive.tf': R,
      'd/main.tf': R,
      'd/negative1.tf': R,
      'd/positive_expected_result.json': '[]\n',
    },
    expect: { 'q/a/test': 'fragment/strong', 'q/b/test/positive1': 'fragment/strong', c: null, d: null },
    reason: /^scanner test samples?: .*positive_expected_result\.json/,
  },
]);

signalTable(testHelper, [
  {
    name: 'a run block module below a test directory is a helper; the module itself is not',
    files: {
      'main.tf': R,
      'tests/main.tftest.hcl':
        'run "setup" {\n  module {\n    source = "./tests/setup"\n  }\n}\nrun "sub" {\n  module {\n    source = "./modules/sub"\n  }\n}\n',
      'tests/setup/main.tf': R,
      'modules/sub/main.tf': R,
    },
    expect: { '.': null, 'tests/setup': 'test/strong', 'modules/sub': null },
    reason: /test helper: run "setup" in tests\/main\.tftest\.hcl/,
  },
]);

signalTable(terragruntSource, [
  {
    name: 'the directory units run, with the number of units',
    files: {
      'live/a/terragrunt.hcl': 'terraform {\n  source = "../..//mod"\n}\n',
      'live/b/terragrunt.hcl': 'terraform {\n  source = "../../mod"\n}\n',
      'mod/main.tf': R,
    },
    expect: { mod: 'shared/strong' },
    reason: /run by Terragrunt unit "live\/a" and 1 more/,
  },
]);

signalTable(localCalls, [
  {
    name: 'called by another module; self-calls and fragment callers do not count',
    files: {
      'app/main.tf': B + call('net', '../net'),
      'net/main.tf': R,
      'gen/provider.tf': `# Generated by Terragrunt\n${call('x', '../lonely')}`,
      'lonely/main.tf': R,
    },
    expect: { app: null, net: 'shared/strong', lonely: null },
    reason: /called by module "app" \(module\.net\)/,
  },
]);

signalTable(indirectCall, [
  {
    name: 'components of a Stacks beta file and modules in Terramate generate_hcl are called',
    files: {
      'stack/components.tfstack.hcl': call('hello', './hello').replace('module', 'component'),
      'stack/hello/main.tf': R,
      'tm/app/stack.tm.hcl': 'stack {\n}\n',
      'tm/app/main.tm.hcl':
        'generate_hcl "_main.tf" {\n  content {\n    module "web" {\n      source = "${terramate.root.path.fs.absolute}/modules/web"\n    }\n    module "db" {\n      source = "../../modules/db"\n    }\n    module "x" {\n      source = "${global.modules}/x"\n    }\n  }\n}\n',
      'modules/web/main.tf': R,
      'modules/db/main.tf': R,
      'modules/x/main.tf': R,
      // Committed generated code is loaded as it is: its calls are ordinary calls.
      'tm/done/stack.tm.hcl': 'stack {\n}\n',
      'tm/done/main.tm.hcl':
        'generate_hcl "_main.tf" {\n  content {\n    module "y" {\n      source = "../../modules/y"\n    }\n  }\n}\n',
      'tm/done/_main.tf': call('y', '../../modules/y'),
      'modules/y/main.tf': R,
    },
    expect: {
      'stack/hello': 'shared/strong',
      'modules/web': 'shared/strong',
      'modules/db': 'shared/strong',
      'modules/x': null,
      'modules/y': null,
    },
    reason:
      /^called by (component "hello" of the Terraform Stacks beta file stack\/components\.tfstack\.hcl|module "(web|db)" in generate_hcl "_main\.tf" \(tm\/app\/main\.tm\.hcl:1\) of the Terramate stack "tm\/app") \(/,
  },
]);

signalTable(backend, [
  {
    name: 'backend and cloud blocks',
    files: {
      's3/main.tf': B,
      'cloud/main.tf': 'terraform {\n  cloud {\n    organization = "o"\n  }\n}\n',
      'none/main.tf': R,
    },
    expect: { s3: 'root/strong', cloud: 'root/strong', none: null },
    reason: /has a (backend "s3" block|cloud block)/,
  },
]);

signalTable(examplePlace, [
  {
    name: 'examples, example, _examples, samples anywhere in the path',
    files: {
      'examples/a/main.tf': R,
      'x/example/main.tf': R,
      '_examples/b/main.tf': R,
      'samples/main.tf': R,
      'exampled/main.tf': R,
    },
    expect: {
      'examples/a': 'example/strong',
      'x/example': 'example/strong',
      '_examples/b': 'example/strong',
      samples: 'example/strong',
      exampled: null,
    },
  },
]);

signalTable(testPlace, [
  {
    name: 'test and CI directories',
    files: {
      'tests/a/main.tf': R,
      'test/fixtures/main.tf': R,
      '.github/plan/main.tf': R,
      'testing/main.tf': R,
    },
    expect: {
      'tests/a': 'test/strong',
      'test/fixtures': 'test/strong',
      '.github/plan': 'test/strong',
      testing: null,
    },
  },
]);

signalTable(wrapper, [
  {
    name: 'wrappers/ with a local call, or a call to a parent; not when configuring a provider',
    files: {
      'main.tf': R,
      'wrappers/main.tf': call('wrapper', '../'),
      'wrappers/sub/main.tf': call('wrapper', '../../sub'),
      'sub/main.tf': R,
      'sub/child/main.tf': call('up', '../'),
      'sub/configured/main.tf': P + call('up', '../'),
    },
    expect: {
      wrappers: 'shared/strong',
      'wrappers/sub': 'shared/strong',
      'sub/child': 'shared/strong',
      'sub/configured': null,
      sub: null,
    },
    reason: /a wrapper/,
  },
]);

signalTable(readmeUsage, [
  {
    name: 'a //<dir> source, a placeholder at its depth, not when configuring a provider',
    files: {
      'README.md':
        '```hcl\nmodule "a" {\n  source = "github.com/org/lib//dns?ref=v1"\n}\nmodule "b" {\n  source = "git::https://github.com/org/lib.git//<<name>>?ref=v1"\n}\n```\n',
      'dns/main.tf': R,
      'vpc/main.tf': R,
      'vpc/sub/main.tf': R,
      'app/main.tf': P,
    },
    expect: { dns: 'shared/strong', vpc: 'shared/strong', 'vpc/sub': null, app: null },
    reason: /the README shows/,
  },
  {
    name: "a registry source for the README's own directory",
    files: { 'README.md': 'source = "org/lib/aws"\n', 'main.tf': R, 'x/main.tf': R },
    expect: { '.': 'shared/strong', x: null },
  },
]);

signalTable(nothingToDeploy, [
  {
    name: 'only required_providers (and a lock file): a weak fragment, except under modules/ or a deployment directory',
    files: {
      'src/versions.tf': 'terraform {\n  required_version = ">= 1.0"\n}\n',
      'src/.terraform.lock.hcl': LOCK,
      'modules/x/versions.tf': 'terraform {}\n',
      'envs/x/versions.tf': 'terraform {}\n',
      'proxy/main.tf': PROXY,
      'res/main.tf': R,
    },
    expect: { src: 'fragment/weak', 'modules/x': null, 'envs/x': null, proxy: null, res: null },
  },
]);

signalTable(lockFile, [
  {
    name: 'with a provider configuration a root; under modules/ a weak shared; otherwise a root',
    files: {
      'a/main.tf': P + R,
      'a/.terraform.lock.hcl': LOCK,
      'modules/b/main.tf': R,
      'modules/b/.terraform.lock.hcl': LOCK,
      'c/main.tf': R,
      'c/.terraform.lock.hcl': LOCK,
      'd/main.tf': R,
    },
    expect: { a: 'root/strong', 'modules/b': 'shared/weak', c: 'root/strong', d: null },
  },
]);

signalTable(undeclaredProject, [
  {
    name: 'an Atlantis project list is complete: other directories outside modules/ are weak examples',
    files: {
      'atlantis.yaml': 'version: 3\nprojects:\n  - dir: net\n',
      'net/main.tf': R,
      'main.tf': R,
      'fixtures/a/main.tf': R,
      'modules/lib/main.tf': R,
    },
    expect: { '.': 'example/weak', 'fixtures/a': 'example/weak', 'modules/lib': null },
    reason:
      /^not among the projects \(atlantis\.yaml lists the 1 directory Atlantis deploys\), and nothing calls it$/,
  },
  {
    name: 'with autodiscover enabled, Atlantis deploys more than its list: nothing said',
    files: {
      'atlantis.yaml': 'version: 3\nautodiscover:\n  mode: enabled\nprojects:\n  - dir: net\n',
      'net/main.tf': R,
      'other/main.tf': R,
    },
    expect: { net: null, other: null },
  },
  {
    name: 'Digger projects, listed or generated, are all it deploys',
    files: {
      'digger.yml': 'projects:\n  - name: prod\n    dir: prod\n',
      'prod/main.tf': R,
      'includeme/main.tf': R,
    },
    expect: { includeme: 'example/weak' },
  },
  {
    name: 'no declaration file, or one that lists no project: nothing said',
    files: { 'atlantis.yaml': 'version: 3\n', 'a/main.tf': R, 'main.tf': R },
    expect: { a: null, '.': null },
  },
]);

signalTable(deploymentPlace, [
  {
    name: 'environments, envs, live, stacks, deployments',
    files: { 'envs/prod/main.tf': R, 'live/main.tf': R, 'x/stacks/y/main.tf': R, 'liver/main.tf': R },
    expect: { 'envs/prod': 'root/strong', live: 'root/strong', 'x/stacks/y': 'root/strong', liver: null },
  },
]);

signalTable(topDirectory, [
  {
    name: 'the top directory only',
    files: { 'main.tf': R, 'a/main.tf': R },
    expect: { '.': 'root/strong', a: null },
  },
]);

signalTable(providerConfiguration, [
  {
    name: 'a configured provider is a weak root; an empty aliased proxy is not',
    files: { 'a/main.tf': P, 'b/main.tf': PROXY + R, 'c/main.tf': 'provider "aws" {}\n' },
    expect: { a: 'root/weak', b: null, c: 'root/weak' },
  },
]);

signalTable(moduleLibrary, [
  {
    name: 'modules that call each other in one directory, nothing deployed anywhere',
    files: {
      'lib/a/main.tf': call('b', '../b') + call('c', '../c'),
      'lib/b/main.tf': R,
      'lib/c/main.tf': R,
      'lib/d/main.tf': P + R,
      'lib/c/sub/main.tf': R,
      'other/main.tf': R,
    },
    expect: {
      'lib/a': 'shared/weak',
      'lib/d': 'shared/weak',
      // A submodule in a library module's directory belongs to the library above it.
      'lib/c/sub': 'shared/weak',
      other: null,
    },
    reason: /module library "lib" \(2 of its [34] other modules are called by modules of it\)/,
  },
  {
    name: 'stages calling modules kept elsewhere are not a library',
    files: {
      '0-bootstrap/main.tf': call('a', '../modules/a') + call('b', '../modules/b'),
      '1-org/main.tf': call('a', '../modules/a') + call('b', '../modules/b'),
      '2-envs/main.tf': call('b', '../modules/b'),
      'modules/a/main.tf': R,
      'modules/b/main.tf': R,
    },
    expect: { '0-bootstrap': null, '1-org': null, '2-envs': null },
  },
  {
    name: 'not when the repository has a backend',
    files: {
      'lib/a/main.tf': call('b', '../b') + call('c', '../c'),
      'lib/b/main.tf': R,
      'lib/c/main.tf': R,
      'lib/d/main.tf': R,
      'deploy/main.tf': B,
    },
    expect: { 'lib/a': null, 'lib/d': null },
  },
  {
    name: 'fewer than two called modules in the directory',
    files: { 'lib/a/main.tf': call('b', '../b'), 'lib/b/main.tf': R, 'lib/d/main.tf': R },
    expect: { 'lib/a': null, 'lib/d': null },
  },
]);

signalTable(privateModulesPlace, [
  {
    name: '_modules and _module directories; weak when configuring a provider',
    files: {
      '_modules/net/main.tf': R,
      'infra/_module/dns/main.tf': R,
      '_modules/legacy/main.tf': P + R,
      'modules_/x/main.tf': R,
    },
    expect: {
      '_modules/net': 'shared/strong',
      'infra/_module/dns': 'shared/strong',
      '_modules/legacy': 'shared/weak',
      'modules_/x': null,
    },
    reason: /its path has a "_modules?" directory/,
  },
]);

signalTable(modulesPlace, [
  {
    name: 'a modules directory in the path',
    files: { 'modules/a/main.tf': R, 'x/modules/main.tf': R, 'modulesx/main.tf': R },
    expect: { 'modules/a': 'shared/weak', 'x/modules': 'shared/weak', modulesx: null },
  },
]);

signalTable(uncalled, [
  {
    name: 'always decides: a weak root',
    files: { 'a/main.tf': R },
    expect: { a: 'root/weak' },
  },
]);
