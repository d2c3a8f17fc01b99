/**
 * Generated README sections: the rule table and sample outputs. `npx tsx scripts/readme-sections.ts
 * --write` refreshes README.md; test/docs/readme.test.ts fails when README is out of date.
 *
 * The corpus sample needs the corpus (test/support/external.ts: `../shared/corpus` or
 * TFGUARD_CORPUS_DIR); without it that section is left as it is (and not checked), with a note.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { renderReport } from '../src/report';
import { RULES } from '../src/rules';
import { closeSharedParser, scanPath } from '../src/scan';
import { corpusFile, corpusStatus } from '../test/support/external';

const ROOT = path.resolve(__dirname, '..');
export const README = path.join(ROOT, 'README.md');
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

async function textOf(target: string): Promise<string> {
  const report = await scanPath(target);
  return '```text\n' + renderReport(report, 'text', { color: false }).trimEnd() + '\n```';
}

/** The sections made from the repository alone. */
export async function repositorySections(): Promise<Record<string, string>> {
  return { rules: rulesTable(), 'demo-output': await textOf(DEMO) };
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
    if (!re.test(out)) throw new Error(`README has no section ${name}`);
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
  if (process.argv.includes('--write')) {
    await fs.writeFile(README, updated);
    process.stdout.write(updated === text ? 'README.md is up to date\n' : 'README.md updated\n');
  } else if (updated !== text) {
    process.stderr.write('README.md is out of date: run npx tsx scripts/readme-sections.ts --write\n');
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
