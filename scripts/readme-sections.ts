/**
 * Generated documentation sections: the README's rule table, sample outputs and settings tables
 * (from the settings tables of src/scan/settings.ts and src/config.ts), and the rule index
 * docs/rules/README.md (one table per group of rules, made from the registry). `npx tsx
 * scripts/readme-sections.ts --write` refreshes both; test/docs/readme.test.ts fails when either is
 * out of date.
 *
 * The corpus sample needs the corpus (test/support/external.ts: `../shared/corpus` or
 * TFGUARD_CORPUS_DIR); without it that section is left as it is (and not checked), with a note.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { renderReport } from '../src/report';
import { OPERATOR_SETTINGS, operatorTable, STAGE_SETTING } from '../src/config';
import { RULES } from '../src/rules';
import { closeSharedParser, scanPath } from '../src/scan';
import { settingsSample, settingsTable } from '../src/scan/settings';
import { serviceSettingsTable } from '../src/service/settings';
import { corpusFile, corpusStatus } from '../test/support/external';

const ROOT = path.resolve(__dirname, '..');
export const README = path.join(ROOT, 'README.md');
export const RULES_INDEX = path.join(ROOT, 'docs/rules/README.md');
export const SERVICE_DOC = path.join(ROOT, 'docs/service.md');

/** docs/service.md's table of variables (the service's, the stage, then the operator settings). */
export function serviceSections(): Record<string, string> {
  return { 'service-settings': serviceSettingsTable([STAGE_SETTING, ...OPERATOR_SETTINGS]) };
}
export const DEMO = path.join(ROOT, 'examples/platform-demo.tar.gz');
/** The corpus archive whose scan the README shows. */
export const CORPUS_SAMPLE = 'hashicorp_learn-terraform-provision-eks-cluster.tar.gz';

export function rulesTable(): string {
  const rows = RULES.map(
    (r) =>
      `| [\`${r.id}\`](docs/rules/${r.id}.md) | ${r.defaultSeverity} | ${r.summary.replace(/\|/g, '\\|')} |`,
  );
  return ['| rule | default severity | checks |', '|---|---|---|', ...rows].join('\n');
}

/** The groups of docs/rules/README.md, by rule id. */
export function ruleGroup(id: string): 'rules-lock' | 'rules-suppressions' | 'rules-providers' {
  if (id.startsWith('lock-')) return 'rules-lock';
  if (id.startsWith('suppression-')) return 'rules-suppressions';
  return 'rules-providers';
}

/** The tables of docs/rules/README.md, in registry order. */
export function rulesIndexSections(): Record<string, string> {
  const out: Record<string, string[]> = { 'rules-providers': [], 'rules-lock': [], 'rules-suppressions': [] };
  for (const r of RULES) {
    (out[ruleGroup(r.id)] as string[]).push(
      `| \`${r.id}\` | ${r.defaultSeverity} | ${r.summary.replace(/\|/g, '\\|')} | [${r.id}.md](${r.id}.md) |`,
    );
  }
  const head = ['| id | default severity | checks | doc |', '|---|---|---|---|'];
  return Object.fromEntries(Object.entries(out).map(([k, rows]) => [k, [...head, ...rows].join('\n')]));
}

async function textOf(target: string): Promise<string> {
  const report = await scanPath(target);
  return '```text\n' + renderReport(report, 'text', { color: false }).trimEnd() + '\n```';
}

/** The sections made from the repository alone. */
export async function repositorySections(): Promise<Record<string, string>> {
  return {
    rules: rulesTable(),
    'demo-output': await textOf(DEMO),
    'settings-sample': settingsSample(),
    'settings-table': settingsTable(),
    'operator-settings': operatorTable(),
  };
}

/** The section made from the corpus (call only when the corpus is there). */
export async function corpusSections(): Promise<Record<string, string>> {
  return { 'corpus-output': await textOf(corpusFile(CORPUS_SAMPLE)) };
}

/** Replaces each `<!-- BEGIN name -->...<!-- END name -->` block of `text`. */
export function applySections(text: string, values: Record<string, string>): string {
  let out = text;
  for (const [name, value] of Object.entries(values)) {
    const re = new RegExp(`(<!-- BEGIN ${name} -->\\n)[\\s\\S]*?(<!-- END ${name} -->)`);
    if (!re.test(out)) throw new Error(`no section ${name}`);
    out = out.replace(re, (_m, a: string, b: string) => `${a}${value}\n${b}`);
  }
  return out;
}

async function main(): Promise<void> {
  const text = await fs.readFile(README, 'utf8');
  const corpus = corpusStatus();
  const values = { ...(await repositorySections()), ...(corpus.ok ? await corpusSections() : {}) };
  const updated = applySections(text, values);
  await closeSharedParser();
  if (!corpus.ok) process.stderr.write(`README section corpus-output left as it is: ${corpus.reason}\n`);
  const index = await fs.readFile(RULES_INDEX, 'utf8');
  const service = await fs.readFile(SERVICE_DOC, 'utf8');
  const files: Array<[string, string, string]> = [
    [README, text, updated],
    [RULES_INDEX, index, applySections(index, rulesIndexSections())],
    [SERVICE_DOC, service, applySections(service, serviceSections())],
  ];
  for (const [file, before, after] of files) {
    const name = path.relative(ROOT, file);
    if (process.argv.includes('--write')) {
      await fs.writeFile(file, after);
      process.stdout.write(after === before ? `${name} is up to date\n` : `${name} updated\n`);
    } else if (after !== before) {
      process.stderr.write(`${name} is out of date: run npx tsx scripts/readme-sections.ts --write\n`);
      process.exitCode = 1;
    }
  }
}

if (require.main === module) void main();
