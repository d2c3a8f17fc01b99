/**
 * Inline suppressions end to end: real tar.gz archives through the real scan (archive reader, HCL
 * lexer and parser, module loader, lock analysis, rules, report), for `.tf`, `.tofu`, `.tf.json`
 * and `.terraform.lock.hcl`; and `terraform` itself as the oracle that the annotated files stay
 * valid for it.
 */
import { describeWithTerraform } from '../support/external';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Finding } from '../../src/rules';
import { verdict } from '../../src/report';
import type { Report } from '../../src/report/types';
import { RULES } from '../../src/rules';
import { mentionsTfguard, parseDirective } from '../../src/rules/suppress';
import fc from 'fast-check';
import { scanFiles } from '../support/scan';
import {
  requiredProvidersTf,
  runTerraform,
  terraformInit,
  withMirror,
  writeTree,
} from '../support/terraform';
import { fakeH1, lineOf, lockText } from '../support/lock-fixtures';
import { lines } from '../support/rule-table';

const KNOWN = new Set(RULES.map((r) => r.id));
const AWS = 'registry.terraform.io/hashicorp/aws';
const NULL = 'registry.terraform.io/hashicorp/null';
const L = '.terraform.lock.hcl';

/** [ruleId, file:line, suppressed reason or null] for every finding. */
function summary(report: Report): [string, string, string | null][] {
  return report.findings.map((f: Finding) => [f.ruleId, `${f.file}:${f.line}`, f.suppressed?.reason ?? null]);
}

describe('parseDirective', () => {
  it.each<[string, string, ReturnType<typeof parseDirective>]>([
    ['an ordinary comment', ' just a comment about tfguard:ignore', null],
    [
      'rule and reason',
      ' tfguard:ignore lock-missing deployed by the pipeline',
      {
        scope: 'line',
        directive: 'tfguard:ignore',
        ruleIds: ['lock-missing'],
        reason: 'deployed by the pipeline',
        problems: [],
      },
    ],
    [
      'several rules with spaces, a -- separator, tflint-style colon, no space after #',
      'tfguard:ignore: lock-missing , root-module-unbounded --  see  ADR-12',
      {
        scope: 'line',
        directive: 'tfguard:ignore',
        ruleIds: ['lock-missing', 'root-module-unbounded'],
        reason: 'see ADR-12',
        problems: [],
      },
    ],
    [
      'an em dash before the reason',
      ' tfguard:ignore lock-missing \u2014 vendored module',
      {
        scope: 'line',
        directive: 'tfguard:ignore',
        ruleIds: ['lock-missing'],
        reason: 'vendored module',
        problems: [],
      },
    ],
    [
      'a block comment spanning lines, duplicates removed',
      '\n * tfguard:ignore-file lock-missing,lock-missing\n * generated, see README\n ',
      {
        scope: 'file',
        directive: 'tfguard:ignore-file',
        ruleIds: ['lock-missing'],
        reason: 'generated, see README',
        problems: [],
      },
    ],
    [
      'Checkov style is not accepted',
      ' tfguard:ignore=lock-missing:reason',
      {
        scope: 'line',
        directive: 'tfguard:ignore',
        ruleIds: [],
        reason: '',
        problems: ['"tfguard:ignore" must be followed by a space and the rule id(s)'],
      },
    ],
  ])('%s', (_name, text, expected) => {
    expect(parseDirective(text, KNOWN)).toEqual(expected);
  });
});

describe('which lines an annotation covers (.tf)', () => {
  const files = {
    'main.tf': lines(
      'terraform {', // 1
      '  required_version = ">= 1.6"', // 2
      '  required_providers {', // 3
      '    # tfguard:ignore root-module-unbounded above, with an ordinary comment between', // 4
      '    # (renovate upgrades these)', // 5
      '    a = { source = "hashicorp/a", version = ">= 1.0" }', // 6
      '    b = { source = "hashicorp/b", version = ">= 1.0" } # tfguard:ignore root-module-unbounded trailing', // 7
      '    # tfguard:ignore root-module-unbounded a blank line ends the stack', // 8
      '', // 9
      '    c = { source = "hashicorp/c", version = ">= 1.0" }', // 10
      '    /* tfguard:ignore root-module-unbounded block comment */ d = { source = "hashicorp/d", version = ">= 1.0" }', // 11
      '    e = { source = "hashicorp/e", version = ">= 1.0" }', // 12
      '    f = { source = "hashicorp/f", version = ">= 1.0" } # tfguard:ignore lock-missing wrong rule', // 13
      '  }', // 14
      '}', // 15
      'locals {', // 16
      '  doc = <<EOT', // 17
      '# tfguard:ignore root-module-unbounded inside a heredoc: not a comment', // 18
      'EOT', // 19
      '}', // 20
    ),
  };

  let report: Report;
  beforeAll(async () => {
    report = await scanFiles(files);
  });

  it('stacked above, trailing and block comments suppress; a blank line, a wrong rule and heredoc text do not', () => {
    expect(summary(report).filter(([id]) => id === 'root-module-unbounded')).toEqual([
      ['root-module-unbounded', 'main.tf:6', 'above, with an ordinary comment between'],
      ['root-module-unbounded', 'main.tf:7', 'trailing'],
      ['root-module-unbounded', 'main.tf:10', null],
      ['root-module-unbounded', 'main.tf:11', 'block comment'],
      ['root-module-unbounded', 'main.tf:12', null],
      ['root-module-unbounded', 'main.tf:13', null],
    ]);
    const f = report.findings.find((x) => x.ruleId === 'root-module-unbounded' && x.line === 6);
    expect(f?.suppressed).toEqual({
      reason: 'above, with an ordinary comment between',
      file: 'main.tf',
      line: 4,
    });
  });

  it('the annotations that covered nothing are reported as unused', () => {
    expect(summary(report).filter(([id]) => id.startsWith('suppression-'))).toEqual([
      ['suppression-unused', 'main.tf:8', null],
      ['suppression-unused', 'main.tf:13', null],
    ]);
  });

  it('suppressed findings leave the counts and the verdict; the others stay', () => {
    const active = report.findings.filter((f) => f.suppressed === undefined);
    expect(report.summary.suppressed).toBe(3);
    expect(report.summary.error).toBe(active.filter((f) => f.severity === 'error').length);
    expect(report.summary.total).toBe(active.length);
    expect(report.summary.error).toBe(3);
  });
});

describe('suppression decides the verdict', () => {
  const tf = (annotation: string) =>
    lines(
      annotation,
      'terraform {',
      '  required_version = ">= 1.6"',
      '  required_providers {',
      '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
      '  }',
      '}',
    );
  const lock = lockText([
    { source: AWS, version: '5.9.0', constraints: '>= 5.0.0', hashes: [fakeH1('aws')] },
  ]);

  it('a whole-file annotation with a reason passes the gate; without a reason it fails it', async () => {
    const ok = await scanFiles({
      'main.tf': tf('# tfguard:ignore-file root-module-unbounded renovate keeps it current'),
      [L]: lock,
    });
    expect(summary(ok)).toEqual([['root-module-unbounded', 'main.tf:5', 'renovate keeps it current']]);
    expect(ok.summary).toMatchObject({ error: 0, warning: 0, notice: 0, total: 0, suppressed: 1 });
    expect(verdict(ok, 'error')).toBe('pass');
    expect(verdict(ok, 'notice')).toBe('pass');

    const bad = await scanFiles({ 'main.tf': tf('# tfguard:ignore-file root-module-unbounded'), [L]: lock });
    expect(summary(bad)).toEqual([
      ['suppression-invalid', 'main.tf:1', null],
      ['root-module-unbounded', 'main.tf:5', null],
    ]);
    expect(bad.summary).toMatchObject({ error: 1, warning: 1, suppressed: 0 });
    expect(verdict(bad, 'error')).toBe('fail');
  });

  it('an ignore-file covers only its own file, not the other files of the module', async () => {
    const report = await scanFiles({
      'a.tf': lines('# tfguard:ignore-file root-module-unbounded pinned by the wrapper', 'locals {}'),
      'main.tf': tf(''),
      [L]: lock,
    });
    expect(summary(report)).toEqual([
      ['suppression-unused', 'a.tf:1', null],
      ['root-module-unbounded', 'main.tf:5', null],
    ]);
  });
});

describe('lock files, OpenTofu and JSON', () => {
  const tfAws = lines(
    'terraform {',
    '  required_version = ">= 1.6"',
    '  required_providers {',
    '    aws = { source = "hashicorp/aws", version = "~> 5.0" }',
    '  }',
    '}',
  );
  const staleLock = lockText([
    { source: AWS, version: '5.9.0', constraints: '~> 5.0', hashes: [fakeH1('aws')] },
    { source: NULL, version: '3.2.2', hashes: [fakeH1('null')] },
  ]);

  it('a comment above a lock entry suppresses the lock finding there', async () => {
    const annotated = staleLock.replace(
      `provider "${NULL}"`,
      `# tfguard:ignore lock-provider-stale kept for the next release\nprovider "${NULL}"`,
    );
    const report = await scanFiles({ 'main.tf': tfAws, [L]: annotated });
    expect(summary(report)).toEqual([
      ['lock-provider-stale', `${L}:${lineOf(annotated, NULL)}`, 'kept for the next release'],
    ]);
    expect(report.findings[0]?.suppressed?.line).toBe(lineOf(annotated, 'tfguard:ignore'));
    const plain = await scanFiles({ 'main.tf': tfAws, [L]: staleLock });
    expect(summary(plain)).toEqual([['lock-provider-stale', `${L}:${lineOf(staleLock, NULL)}`, null]]);
  });

  it('an ignore-file in the lock file header', async () => {
    const annotated = staleLock.replace(
      '# Manual edits may be lost in future updates.\n',
      '# Manual edits may be lost in future updates.\n# tfguard:ignore-file lock-provider-stale migration in progress\n',
    );
    const report = await scanFiles({ 'main.tf': tfAws, [L]: annotated });
    expect(summary(report)).toEqual([
      ['lock-provider-stale', `${L}:${lineOf(annotated, NULL)}`, 'migration in progress'],
    ]);
  });

  it('.tofu files under OpenTofu', async () => {
    const report = await scanFiles(
      {
        'main.tofu': lines(
          'terraform {',
          '  required_version = ">= 1.6"',
          '  required_providers {',
          '    aws = { source = "hashicorp/aws", version = ">= 5.0" } // tfguard:ignore root-module-unbounded tofu root',
          '  }',
          '}',
        ),
        [L]: lockText([
          {
            source: 'registry.opentofu.org/hashicorp/aws',
            version: '5.9.0',
            constraints: '>= 5.0.0',
            hashes: [fakeH1('aws')],
          },
        ]),
      },
      { config: 'engine = "opentofu"\n' },
    );
    expect(report.engine).toBe('opentofu');
    expect(summary(report)).toEqual([['root-module-unbounded', 'main.tofu:4', 'tofu root']]);
  });

  it('.tf.json: a top-level "//" ignore-file suppresses; a nested one is invalid and does not', async () => {
    const json = (comment: Record<string, string>, nested: Record<string, string>) =>
      JSON.stringify(
        {
          ...comment,
          terraform: {
            ...nested,
            required_version: '>= 1.6',
            required_providers: { aws: { source: 'hashicorp/aws', version: '>= 5.0' } },
          },
        },
        null,
        2,
      );
    const lock = lockText([
      { source: AWS, version: '5.9.0', constraints: '>= 5.0.0', hashes: [fakeH1('aws')] },
    ]);
    const top = json({ '//': 'tfguard:ignore-file root-module-unbounded generated by the CDK app' }, {});
    const good = await scanFiles({ 'main.tf.json': top, [L]: lock });
    expect(summary(good)).toEqual([
      ['root-module-unbounded', `main.tf.json:${lineOf(top, '"version"')}`, 'generated by the CDK app'],
    ]);
    const inner = json({}, { '//': 'tfguard:ignore-file root-module-unbounded generated' });
    const bad = await scanFiles({ 'main.tf.json': inner, [L]: lock });
    expect(summary(bad)).toEqual([
      ['suppression-invalid', `main.tf.json:${lineOf(inner, '"//"')}`, null],
      ['root-module-unbounded', `main.tf.json:${lineOf(inner, '"version"')}`, null],
    ]);
  });

  it('with the registry check on, an unused registry-rule annotation is reported', async () => {
    const host = 'registry.example.test/acme/cloud';
    const lock = lockText([{ source: host, version: '1.0.0', constraints: '~> 1.0', hashes: [fakeH1('c')] }]);
    const annotated = lock.replace(
      `provider "${host}"`,
      `# tfguard:ignore lock-registry-unavailable,lock-hash-unknown private registry\nprovider "${host}"`,
    );
    const files = {
      'main.tf': lines(
        'terraform {',
        '  required_version = ">= 1.6"',
        '  required_providers {',
        `    cloud = { source = "${host}", version = "~> 1.0" }`,
        '  }',
        '}',
      ),
      [L]: annotated,
    };
    const on = await scanFiles(files, { config: 'registry = true\n' });
    expect(summary(on)).toEqual([
      ['suppression-unused', `${L}:${lineOf(annotated, 'tfguard:ignore')}`, null],
      ['lock-registry-unavailable', `${L}:${lineOf(annotated, 'provider')}`, 'private registry'],
    ]);
    expect(on.findings[0]?.message).toContain('covered no lock-hash-unknown finding');
    const off = await scanFiles(files);
    expect(summary(off)).toEqual([]);
  });
});

describeWithTerraform('terraform accepts the annotated files (oracle)', () => {
  jest.setTimeout(120_000);

  it('an annotated lock file passes init -lockfile=readonly; terraform drops comments when it rewrites it', async () => {
    const mirror = await withMirror([
      { source: 'hashicorp/fake', version: '1.0.0' },
      { source: 'hashicorp/other', version: '2.0.0' },
    ]);
    try {
      const work = join(mirror.dir, 'work');
      await mkdir(work);
      await writeTree(work, {
        'main.tf': requiredProvidersTf({ fake: { source: 'hashicorp/fake', version: '~> 1.0' } }),
      });
      expect((await terraformInit(work, mirror)).code).toBe(0);
      const written = await readFile(join(work, L), 'utf8');
      // Findings point at a line of the entry (here: `hashes`), so the annotation goes directly above it.
      const annotation = '  # tfguard:ignore lock-platform-coverage built on one platform only';
      const annotated = written.replace('  hashes = [', `${annotation}\n  hashes = [`);
      expect(annotated).not.toBe(written);
      await writeTree(work, { [L]: annotated });
      const readonly = await terraformInit(work, mirror, ['-lockfile=readonly']);
      expect([readonly.code, readonly.output]).toEqual([
        0,
        expect.stringContaining('successfully initialized'),
      ]);
      expect(await readFile(join(work, L), 'utf8')).toBe(annotated);

      // tfguard reads that very file: the annotation is valid and parsed where terraform left it.
      const report = await scanFiles(
        { 'main.tf': await readFile(join(work, 'main.tf'), 'utf8'), [L]: annotated },
        { config: 'platforms = ["linux_amd64", "plan9_amd64"]\n' },
      );
      expect(
        summary(report).filter(([id]) => id.startsWith('lock-') || id.startsWith('suppression-')),
      ).toEqual([
        ['lock-platform-coverage', `${L}:${lineOf(annotated, 'hashes')}`, 'built on one platform only'],
      ]);

      // A change to the lock makes terraform rewrite it: the annotation is gone.
      await writeTree(work, {
        'main.tf': requiredProvidersTf({
          fake: { source: 'hashicorp/fake', version: '~> 1.0' },
          other: { source: 'hashicorp/other', version: '~> 2.0' },
        }),
      });
      expect((await terraformInit(work, mirror)).code).toBe(0);
      expect(await readFile(join(work, L), 'utf8')).not.toContain('tfguard:ignore');
    } finally {
      await mirror.cleanup();
    }
  });

  it('a .tf.json file with a top-level "//" annotation is valid Terraform', async () => {
    const mirror = await withMirror([{ source: 'hashicorp/fake', version: '1.0.0' }]);
    try {
      const work = join(mirror.dir, 'json');
      await mkdir(work);
      await writeTree(work, {
        'main.tf.json': JSON.stringify({
          '//': 'tfguard:ignore-file root-module-unbounded generated',
          terraform: { required_providers: { fake: { source: 'hashicorp/fake', version: '>= 1.0' } } },
        }),
      });
      const r = await runTerraform(['providers', '-no-color'], work, mirror.env);
      expect([r.code, r.output]).toEqual([
        0,
        expect.stringContaining('provider[registry.terraform.io/hashicorp/fake] >= 1.0'),
      ]);
    } finally {
      await mirror.cleanup();
    }
  });
});

describe('mentionsTfguard (the pre-filter that skips files without annotations)', () => {
  // The reference is Buffer.indexOf of the whole prefix, which it replaced.
  const reference = (b: Buffer): boolean => b.indexOf('tfguard:') !== -1;

  it.each([
    ['', false],
    ['tfguard:', true],
    ['# tfguard:ignore x', true],
    ['tfguard', false],
    [':tfguard', false],
    ['tfguar:', false],
    ['tfgguard:', false],
    ['tftfguard:', true],
    ['Tfguard:', false],
    ['a ? b : c # tfguard: ignore', true],
    ['::::::::tfguard:', true],
    ['fguard:', false],
    ['tfguarx:', false],
    ['xfguard:', false],
  ])('%j → %s', (text, expected) => {
    const b = Buffer.from(text, 'utf8');
    expect(mentionsTfguard(b)).toBe(expected);
    expect(reference(b)).toBe(expected);
  });

  it('agrees with Buffer.indexOf on random text made of pieces of the prefix', () => {
    // Near misses are the point: every prefix and suffix of `tfguard:`, and the prefix with one
    // character replaced.
    const word = 'tfguard:';
    const near = [...word].flatMap((_, k) => [
      word.slice(0, k),
      word.slice(k),
      `${word.slice(0, k)}x${word.slice(k + 1)}`,
    ]);
    const piece = fc.constantFrom(...near, word, ':', ' ', '\n', 'é');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const b = Buffer.from(pieces.join(''), 'utf8');
        return mentionsTfguard(b) === reference(b);
      }),
      { numRuns: 2000 },
    );
  });
});
