import { InputError } from '../../src/errors';
import { findingsOf, scanFiles } from '../support/scan';

const ROOT_TF = `terraform {
  required_version = ">= 1.6"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}
`;

async function rejection(config: string): Promise<InputError> {
  try {
    await scanFiles({ 'main.tf': ROOT_TF }, { config });
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  throw new Error('expected the scan to be rejected');
}

describe('.tfguard.hcl', () => {
  it.each([
    ['unknown setting', 'colour = "blue"\n', /\.tfguard\.hcl:1: unknown setting "colour"/],
    [
      'unknown rule id',
      'rule "root-module-unbound" {\n  severity = "warning"\n}\n',
      /:1: unknown rule id "root-module-unbound"/,
    ],
    [
      'bad severity',
      'rule "root-module-unbounded" {\n  severity = "fatal"\n}\n',
      /:2: severity must be one of error, warning, notice/,
    ],
    [
      'empty rule block',
      'rule "root-module-unbounded" {\n}\n',
      /:1: rule "root-module-unbounded" sets neither/,
    ],
    [
      'rule configured twice',
      'rule "parse-error" {\n  enabled = false\n}\nrule "parse-error" {\n  enabled = true\n}\n',
      /:4: rule "parse-error" is configured twice/,
    ],
    ['bad engine', 'engine = "pulumi"\n', /:1: engine must be "terraform" or "opentofu"/],
    ['roots not a list', 'roots = "live/**"\n', /:1: "roots" must be a list of strings/],
    ['examples not a list', 'examples = "ex/*"\n', /:1: "examples" must be a list of strings/],
    ['tests not a list', 'tests = 1\n', /:1: "tests" must be a list of strings/],
    ['fragments not a list', 'fragments = true\n', /:1: "fragments" must be a list of strings/],
    ['strict_examples not bool', 'strict_examples = "yes"\n', /:1: "strict_examples" must be true or false/],
    ['engines not a map', 'engines = ["tofu/**"]\n', /:1: "engines" must be a map of root glob/],
    [
      'engines bad value',
      'engines = { "tofu/**" = "pulumi" }\n',
      /:1: engines\["tofu\/\*\*"\] must be "terraform" or "opentofu"/,
    ],
    [
      'bad platform',
      'platforms = ["linux-amd64"]\n',
      /:1: platform "linux-amd64" is not of the form os_arch/,
    ],
    ['registry not bool', 'registry = "yes"\n', /:1: "registry" must be true or false/],
    [
      'registry_hosts in the archive (SSRF)',
      'registry_hosts = { "registry.terraform.io" = "http://169.254.169.254" }\n',
      /:1: "registry_hosts" decides where tfguard sends network requests, so only whoever runs the scan may set it/,
    ],
    [
      'module_hosts in the archive (SSRF)',
      'module_hosts = { "github.com" = "" }\n',
      /:1: "module_hosts" decides where tfguard downloads remote modules from, so only whoever runs the scan may set it/,
    ],
    [
      'unknown lock_mode',
      'engine = "terraform"\nlock_mode = "strict"\n',
      /\.tfguard\.hcl:2: lock_mode must be "default" or "readonly"; got "strict"/,
    ],
    ['lock_mode in another case', 'lock_mode = "READONLY"\n', /:1: lock_mode must be .*; got "READONLY"/],
    ['lock_mode not a string', 'lock_mode = true\n', /:1: "lock_mode" must be a string/],
    [
      'unknown module_ref_policy',
      'module_ref_policy = "tag"\n',
      /\.tfguard\.hcl:1: module_ref_policy must be "tag-or-sha" or "sha"; got "tag"/,
    ],
    [
      'module_ref_policy not a string',
      'module_ref_policy = ["sha"]\n',
      /:1: "module_ref_policy" must be a string/,
    ],
    [
      'unknown module_version_style',
      'engine = "terraform"\nmodule_version_style = "Exact"\n',
      /\.tfguard\.hcl:2: module_version_style must be "any", "exact" or "pessimistic"; got "Exact"/,
    ],
    [
      'module_version_style not a string',
      'module_version_style = 1\n',
      /:1: "module_version_style" must be a string/,
    ],
    ['unexpected block', 'limits {\n  max = 1\n}\n', /:1: unexpected block "limits"/],
    ['syntax error', 'roots = [\n', /\.tfguard\.hcl:\d+: cannot be parsed/],
  ])('%s rejects the scan with invalid-config and the line', async (_name, config, message) => {
    const err = await rejection(config);
    expect(err.code).toBe('invalid-config');
    expect(err.entry).toBe('.tfguard.hcl');
    expect(err.message).toMatch(message);
  });

  it('registry_hosts from --config is accepted, and validated', async () => {
    const ok = await scanFiles(
      { 'main.tf': ROOT_TF },
      {
        configText: {
          name: 'ops.hcl',
          text: 'registry_hosts = { "tfe.example.com" = "https://tfe.example.com/" }\n',
        },
      },
    );
    expect(ok.configFiles).toEqual(['ops.hcl']);
    await expect(
      scanFiles(
        { 'main.tf': ROOT_TF },
        {
          configText: { name: 'ops.hcl', text: 'registry_hosts = { "registry.terraform.io" = "ftp://x" }\n' },
        },
      ),
    ).rejects.toMatchObject({
      code: 'invalid-config',
      message: expect.stringMatching(
        /ops\.hcl:1: registry_hosts\["registry.terraform.io"\] must be an http\(s\) URL/,
      ),
    });
  });

  it('module_hosts from --config is accepted ("" for https://HOST), and validated', async () => {
    const ok = await scanFiles(
      { 'main.tf': ROOT_TF },
      {
        configText: {
          name: 'ops.hcl',
          text: 'module_hosts = { "GitHub.com" = "", "git.example.com" = "https://mirror.example.com/" }\n',
        },
      },
    );
    expect(ok.configFiles).toEqual(['ops.hcl']);
    for (const [text, message] of [
      [
        'module_hosts = { "github.com" = "ssh://git@github.com" }\n',
        /ops\.hcl:1: module_hosts\["github.com"\] must be an http\(s\) URL, or "" for https:\/\/github.com/,
      ],
      ['module_hosts = ["github.com"]\n', /ops\.hcl:1: "module_hosts" must be a map of hostname to base URL/],
    ] as const) {
      await expect(
        scanFiles({ 'main.tf': ROOT_TF }, { configText: { name: 'ops.hcl', text } }),
      ).rejects.toMatchObject({ code: 'invalid-config', message: expect.stringMatching(message) });
    }
  });

  it('a bad lock_mode in --config names that file and line', async () => {
    await expect(
      scanFiles(
        { 'main.tf': ROOT_TF },
        { configText: { name: 'ci/tfguard.hcl', text: 'registry = false\n\nlock_mode = "read-only"\n' } },
      ),
    ).rejects.toMatchObject({
      code: 'invalid-config',
      message: expect.stringMatching(
        /^ci\/tfguard\.hcl:3: lock_mode must be "default" or "readonly"; got "read-only"$/,
      ),
    });
  });

  it('roots and shared globs decide the module kind before any heuristic', async () => {
    const files = {
      'modules/app/main.tf': ROOT_TF,
      'live/prod/main.tf': ROOT_TF,
    };
    const plain = await scanFiles(files);
    expect(plain.modules.find((m) => m.path === 'modules/app')?.kind).toBe('shared');
    expect(plain.modules.find((m) => m.path === 'live/prod')?.kind).toBe('root');
    const configured = await scanFiles(files, { config: 'roots = ["modules/*"]\nshared = ["live/**"]\n' });
    const app = configured.modules.find((m) => m.path === 'modules/app');
    const prod = configured.modules.find((m) => m.path === 'live/prod');
    expect(app?.kind).toBe('root');
    expect(app?.kindReason).toMatch(/roots/);
    expect(prod?.kind).toBe('shared');
    expect(configured.configFiles).toEqual(['.tfguard.hcl']);
  });

  it('an explicit engine wins over detection, both ways', async () => {
    const files = { 'main.tf': ROOT_TF, 'extra.tofu': 'resource "random_pet" "x" {}\n' };
    expect((await scanFiles(files)).engine).toBe('opentofu');
    expect((await scanFiles(files, { config: 'engine = "terraform"\n' })).engine).toBe('terraform');
    const tofu = await scanFiles({ 'main.tf': ROOT_TF }, { config: 'engine = "opentofu"\n' });
    expect(tofu.engine).toBe('opentofu');
    expect(tofu.modules[0]?.providers.find((p) => p.name === 'aws')?.source).toBe(
      'registry.opentofu.org/hashicorp/aws',
    );
  });

  it('severity overrides and disabled rules apply; --config text is applied after the archive file', async () => {
    const archiveConfig = 'rule "root-module-unbounded" {\n  severity = "warning"\n}\n';
    const relaxed = await scanFiles({ 'main.tf': ROOT_TF }, { config: archiveConfig });
    expect(findingsOf(relaxed, 'root-module-unbounded').map((f) => f.severity)).toEqual(['warning']);
    const off = await scanFiles(
      { 'main.tf': ROOT_TF },
      {
        config: archiveConfig,
        configText: { name: 'ci.hcl', text: 'rule "root-module-unbounded" {\n  enabled = false\n}\n' },
      },
    );
    expect(findingsOf(off, 'root-module-unbounded')).toEqual([]);
    expect(off.configFiles).toEqual(['.tfguard.hcl', 'ci.hcl']);
  });
});
