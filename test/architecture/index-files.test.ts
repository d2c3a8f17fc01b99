/**
 * Every `index.ts` under src/ only re-exports (`export … from`), so the code lives
 * in files named for what they do. Checked with the TypeScript compiler's own parser, and shown to
 * bite on a planted index that declares something.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

const SRC = path.resolve(__dirname, '../../src');

/** The statements of an index file that are not re-exports, as `line: text`. */
export function notReExports(fileName: string, text: string): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  return file.statements
    .filter((s) => !(ts.isExportDeclaration(s) && s.moduleSpecifier !== undefined))
    .map(
      (s) => `${file.getLineAndCharacterOfPosition(s.getStart()).line + 1}: ${s.getText().split('\n')[0]}`,
    );
}

async function indexFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await indexFiles(full)));
    else if (entry.name === 'index.ts') out.push(full);
  }
  return out;
}

describe('index.ts files', () => {
  it('only re-export', async () => {
    const files = await indexFiles(SRC);
    expect(files.length).toBeGreaterThan(5);
    const offenders: string[] = [];
    for (const file of files) {
      for (const s of notReExports(file, await fs.readFile(file, 'utf8'))) {
        offenders.push(`${path.relative(SRC, file)}:${s}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the check bites on declarations, imports and local exports', () => {
    expect(
      notReExports(
        'index.ts',
        [
          "export * from './a';",
          "export type { B } from './b';",
          "import { c } from './c';",
          'export const d = c;',
          'export { c };',
          'function e() {}',
        ].join('\n'),
      ),
    ).toEqual([
      "3: import { c } from './c';",
      '4: export const d = c;',
      '5: export { c };',
      '6: function e() {}',
    ]);
  });
});
