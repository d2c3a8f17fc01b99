/**
 * Generated README sections: the rule table and sample outputs. `npx tsx scripts/readme-sections.ts
 * --write` refreshes README.md; test/docs/readme.test.ts fails when README is out of date.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { renderReport } from '../src/report';
import { RULES } from '../src/rules';
import { closeSharedParser, scanPath } from '../src/scan';

const ROOT = path.resolve(__dirname, '..');
export const README = path.join(ROOT, 'README.md');
export const DEMO = path.join(ROOT, 'examples/platform-demo.tar.gz');
export const CORPUS_SAMPLE = path.resolve(
  ROOT,
  '../shared/corpus/hashicorp_learn-terraform-provision-eks-cluster.tar.gz',
);

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

export async function sections(): Promise<Record<string, string>> {
  return {
    rules: rulesTable(),
    'demo-output': await textOf(DEMO),
    'corpus-output': await textOf(CORPUS_SAMPLE),
  };
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
  const updated = applySections(text, await sections());
  await closeSharedParser();
  if (process.argv.includes('--write')) {
    await fs.writeFile(README, updated);
    process.stdout.write(updated === text ? 'README.md is up to date\n' : 'README.md updated\n');
  } else if (updated !== text) {
    process.stderr.write('README.md is out of date: run npx tsx scripts/readme-sections.ts --write\n');
    process.exitCode = 1;
  }
}

if (require.main === module) void main();
