// Lints planted code with the repository's ESLint configuration (run by layers.test.ts in a child
// process: ESLint loads eslint.config.mjs with a dynamic import, which Jest's module sandbox cannot
// do). Reads JSON on stdin:
//   { single: [[file, code], ...], sets: [[[file, code], ...], ...] }
// `single` cases are linted in place with lintText (the file need not exist; an existing file is
// linted as if it held `code`). Each `sets` entry is written into a temporary copy of the
// repository (src/, handlers/, the ESLint configuration) and its files linted there, so that
// several planted files can import each other (a planted cycle). Writes
//   { single: string[][], sets: string[][], sources: string[] }
// to stdout: the tfguard/* messages of each case, and those of the real src/ and handlers/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';

const root = process.cwd();
// The architecture rules' messages (and no-restricted-imports'), and any fatal one (a parse error
// would hide them).
const ours = (messages) =>
  messages
    .filter((m) => m.fatal || m.ruleId?.startsWith('tfguard/') || m.ruleId === 'no-restricted-imports')
    .map((m) => m.message);

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { single, sets } = JSON.parse(input);

const eslint = new ESLint({ cwd: root });
const singleOut = [];
for (const [file, code] of single) {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  singleOut.push(ours(result.messages));
}

const setsOut = [];
for (const set of sets) {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'tfguard-lint-'));
  try {
    for (const part of [
      'src',
      'handlers',
      'scripts/eslint-architecture.mjs',
      'eslint.config.mjs',
      'package.json',
    ]) {
      fs.cpSync(path.join(root, part), path.join(copy, part), { recursive: true });
    }
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
    for (const [file, code] of set) {
      fs.mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
      fs.writeFileSync(path.join(copy, file), code);
    }
    const linter = new ESLint({ cwd: copy });
    const results = await linter.lintFiles(set.map(([file]) => file));
    setsOut.push(
      results.flatMap((r) => ours(r.messages).map((m) => `${path.relative(copy, r.filePath)}: ${m}`)),
    );
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

const sources = (await eslint.lintFiles(['src/**/*.ts', 'handlers/**/*.ts'])).flatMap((r) =>
  ours(r.messages).map((m) => `${path.relative(root, r.filePath)}: ${m}`),
);
process.stdout.write(JSON.stringify({ single: singleOut, sets: setsOut, sources }));
