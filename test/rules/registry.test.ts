import { DEFAULT_CONFIG } from '../../src/scan/config-file';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ScanConfig } from '../../src/model';
import { INTERNAL_ERROR_RULE_ID, LOCK_RULES, RULES, ruleById, runRules } from '../../src/rules';
import { REGISTRY_RULE_IDS } from '../../src/rules/lock-helpers';
import type { Rule, RuleContext } from '../../src/rules/types';
import { findingsOf, scanFiles } from '../support/scan';
import { lines } from '../support/rule-table';

const repo = path.resolve(__dirname, '../..');
const readme = fs.readFileSync(path.join(repo, 'docs/rules/README.md'), 'utf8');
/** Files in src/rules that are not rules. */
const NOT_RULES = new Set([
  'index.ts',
  'registry.ts',
  'types.ts',
  'helpers.ts',
  'root-bounds.ts',
  'lock-helpers.ts',
  'fix-helpers.ts',
  'context.ts',
  'suppress.ts',
  'merge.ts',
  'policy-helpers.ts',
]);

/** The README index row of a rule: `| \`id\` | severity | ... | [..](id.md) |`. */
function indexRow(id: string): string | undefined {
  return readme.split('\n').find((l) => l.startsWith(`| \`${id}\` |`));
}

describe('rule registry', () => {
  it('ids are unique, kebab-case and resolvable with ruleById', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of RULES) {
      expect(r.id).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
      expect(ruleById(r.id)).toBe(r);
      expect(['error', 'warning', 'notice']).toContain(r.defaultSeverity);
      expect(r.summary.length).toBeGreaterThan(20);
    }
    expect(ruleById('no-such-rule')).toBeUndefined();
    expect(ruleById(INTERNAL_ERROR_RULE_ID)).toBeUndefined();
  });

  it.each(RULES.map((r) => [r.id, r] as const))(
    '%s: own file, doc page, test file and index row',
    (id, rule) => {
      const file = path.join(repo, 'src/rules', `${id}.ts`);
      expect(fs.existsSync(file)).toBe(true);
      // The file named after the id exports this very rule object.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require(file) as Record<string, unknown>;
      expect(Object.values(mod)).toContain(rule);

      const doc = path.join(repo, 'docs/rules', `${id}.md`);
      expect([doc, fs.existsSync(doc)]).toEqual([doc, true]);
      const text = fs.readFileSync(doc, 'utf8');
      expect(text.startsWith(`# ${id}\n`)).toBe(true);
      expect(text).toContain(`Default severity: **${rule.defaultSeverity}**`);
      expect(text).toContain(`rule "${id}" { enabled = false }`);
      expect(text).toMatch(/## Why/);
      expect(text).toMatch(/## Fix/);

      // Its own test file, whose table is about this rule (the one harness, test/support/rule-table.ts).
      const test = path.join(repo, 'test/rules', `${id}.test.ts`);
      expect([test, fs.existsSync(test)]).toEqual([test, true]);
      expect(fs.readFileSync(test, 'utf8')).toMatch(
        new RegExp(`\\b(ruleTable|lockRuleTable|policyRuleTable)\\('${id}'`),
      );

      const row = indexRow(id);
      expect(row).toBeDefined();
      expect(row).toContain(`| ${rule.defaultSeverity} |`);
      expect(row).toContain(`](${id}.md)`);
    },
  );

  it('every rule file in src/rules is registered', () => {
    const files = fs
      .readdirSync(path.join(repo, 'src/rules'))
      .filter((f) => f.endsWith('.ts') && !NOT_RULES.has(f));
    const ids = new Set(RULES.map((r) => r.id));
    for (const f of files) expect([f, ids.has(f.replace(/\.ts$/, ''))]).toEqual([f, true]);
  });

  it('the registry-check rule ids name registered lock rules', () => {
    for (const id of REGISTRY_RULE_IDS) expect([id, LOCK_RULES.some((r) => r.id === id)]).toEqual([id, true]);
    expect(LOCK_RULES.every((r) => r.id.startsWith('lock-'))).toBe(true);
  });

  it('the index links only to rule pages that exist, one per registered rule', () => {
    const links = [...readme.matchAll(/\]\(([^)]+\.md)\)/g)].map((m) => m[1] as string);
    expect(links.filter((l) => !l.startsWith('../'))).toEqual(RULES.map((r) => `${r.id}.md`));
    for (const l of links) expect([l, fs.existsSync(path.join(repo, 'docs/rules', l))]).toEqual([l, true]);
  });
});

const config = (rules: ScanConfig['rules'] = {}): ScanConfig => ({ ...DEFAULT_CONFIG, rules });

function emptyContext(rules: ScanConfig['rules'] = {}): RuleContext {
  return {
    modules: [],
    moduleByPath: new Map(),
    roots: [],
    diagnostics: [],
    config: config(rules),
    engine: 'terraform',
  };
}

describe('runRules', () => {
  const emits: Rule = {
    id: 'emits',
    defaultSeverity: 'warning',
    summary: 'test rule that reports fixed findings',
    check: () => [
      { module: 'b', file: 'b/main.tf', line: 3, message: 'second' },
      { module: '.', file: null, line: null, message: 'no location' },
      { module: 'a', file: 'a/main.tf', line: 10, message: 'z' },
      { module: 'a', file: 'a/main.tf', line: 2, message: 'first' },
    ],
  };
  const throws: Rule = {
    id: 'throws',
    defaultSeverity: 'notice',
    summary: 'test rule with a bug',
    check: () => {
      throw new TypeError('boom');
    },
  };

  it('adds ruleId and severity and sorts by file, line, ruleId, module, message', () => {
    const out = runRules(emptyContext(), [emits]);
    expect(out.map((f) => [f.file, f.line, f.message, f.ruleId, f.severity])).toEqual([
      [null, null, 'no location', 'emits', 'warning'],
      ['a/main.tf', 2, 'first', 'emits', 'warning'],
      ['a/main.tf', 10, 'z', 'emits', 'warning'],
      ['b/main.tf', 3, 'second', 'emits', 'warning'],
    ]);
  });

  it('a rule that throws becomes one internal-error finding and the others still run', () => {
    const out = runRules(emptyContext(), [throws, emits]);
    const internal = out.filter((f) => f.ruleId === INTERNAL_ERROR_RULE_ID);
    expect(internal).toEqual([
      expect.objectContaining({
        severity: 'error',
        module: '.',
        file: null,
        line: null,
        message: expect.stringContaining('rule "throws"'),
      }),
    ]);
    expect(internal[0]?.message).toContain('TypeError: boom');
    expect(out.filter((f) => f.ruleId === 'emits')).toHaveLength(4);
  });

  it('applies configured severity and enabled = false', () => {
    expect(runRules(emptyContext({ emits: { severity: 'error' } }), [emits]).map((f) => f.severity)).toEqual([
      'error',
      'error',
      'error',
      'error',
    ]);
    expect(runRules(emptyContext({ emits: { enabled: false } }), [emits])).toEqual([]);
    // A disabled buggy rule is not run at all.
    expect(runRules(emptyContext({ throws: { enabled: false } }), [throws])).toEqual([]);
    // enabled = true keeps the default severity.
    expect(runRules(emptyContext({ emits: { enabled: true } }), [emits])[0]?.severity).toBe('warning');
  });

  it('marks findings covered by annotations, then runs the after-suppression rules with what was used', () => {
    const annotation = {
      file: 'a/main.tf',
      line: 9,
      scope: 'line' as const,
      directive: 'tfguard:ignore',
      ruleIds: ['emits'],
      reason: 'accepted',
      covers: [9, 10],
      problems: [],
    };
    const invalid = { ...annotation, line: 1, covers: [1, 2], problems: ['gives no reason'] };
    let seen: RuleContext['suppressionsUsed'];
    const after: Rule = {
      id: 'after',
      defaultSeverity: 'notice',
      summary: 'test rule that runs after suppression',
      stage: 'after-suppression',
      check: (ctx) => {
        seen = ctx.suppressionsUsed;
        return [{ module: 'a', file: 'a/main.tf', line: 10, message: 'after' }];
      },
    };
    const ctx: RuleContext = { ...emptyContext(), annotations: [annotation, invalid] };
    const out = runRules(ctx, [after, emits]);
    expect(out.map((f) => [f.ruleId, f.line, f.suppressed ?? null])).toEqual([
      ['emits', null, null],
      // line 2 is covered only by the invalid annotation, which suppresses nothing
      ['emits', 2, null],
      ['after', 10, null],
      ['emits', 10, { reason: 'accepted', file: 'a/main.tf', line: 9 }],
      ['emits', 3, null],
    ]);
    expect(seen).toEqual(new Map([[annotation, new Set(['emits'])]]));
  });

  it('runs every registered rule on an empty configuration without findings or errors', () => {
    expect(runRules(emptyContext())).toEqual([]);
  });
});

describe('settings through .tfguard.hcl (full pipeline)', () => {
  const files = {
    'versions.tf': lines(
      'terraform {',
      '  required_providers {',
      '    aws = { source = "hashicorp/aws", version = ">= 5.0" }',
      '    random = "~> 3.5"',
      '  }',
      '}',
    ),
  };

  it('defaults', async () => {
    const report = await scanFiles(files);
    expect(findingsOf(report, 'root-module-unbounded').map((f) => f.severity)).toEqual(['error']);
    expect(findingsOf(report, 'missing-provider-source').map((f) => f.severity)).toEqual(['warning']);
    expect(findingsOf(report, 'required-version-missing').map((f) => f.severity)).toEqual(['notice']);
  });

  it('severity overrides and disabled rules', async () => {
    const report = await scanFiles(files, {
      config: lines(
        'rule "root-module-unbounded" { severity = "notice" }',
        'rule "missing-provider-source" { severity = "error" }',
        'rule "required-version-missing" { enabled = false }',
      ),
    });
    expect(findingsOf(report, 'root-module-unbounded').map((f) => f.severity)).toEqual(['notice']);
    expect(findingsOf(report, 'missing-provider-source').map((f) => f.severity)).toEqual(['error']);
    expect(findingsOf(report, 'required-version-missing')).toEqual([]);
    expect(report.summary.notice).toBe(report.findings.filter((f) => f.severity === 'notice').length);
  });

  it('report findings are in the engine order', async () => {
    const report = await scanFiles(files);
    const keys = report.findings.map(
      (f) => `${f.file ?? ''}\u0000${String(f.line ?? 0).padStart(8, '0')}\u0000${f.ruleId}`,
    );
    expect(keys).toEqual([...keys].sort());
  });
});
