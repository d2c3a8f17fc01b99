// Lints planted import statements with the repository's ESLint configuration (run by
// layers.test.ts in a child process: ESLint loads eslint.config.mjs with a dynamic import, which
// Jest's module sandbox cannot do). Reads [[file, specifier], ...] as JSON on stdin; writes
// { planted: string[][], sources: string[] } (the no-restricted-imports messages) to stdout.
import path from 'node:path';
import { ESLint } from 'eslint';

const root = process.cwd();
const eslint = new ESLint({ cwd: root });
const restricted = (messages) => messages.filter((m) => m.ruleId === 'no-restricted-imports');

let input = '';
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
const planted = [];
for (const [file, specifier] of cases) {
  const code = `import * as planted from '${specifier}';\nexport const x = planted;\n`;
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  planted.push(restricted(result.messages).map((m) => m.message));
}
const sources = (await eslint.lintFiles(['src/**/*.ts', 'handlers/**/*.ts'])).flatMap((r) =>
  restricted(r.messages).map((m) => `${path.relative(root, r.filePath)}:${m.line} ${m.message}`),
);
process.stdout.write(JSON.stringify({ planted, sources }));
