/**
 * `robustnessArchives()`: the archives SOURCES.md lists for robustness tests, read from whichever
 * corpus directory TFGUARD_CORPUS_DIR names; on the real corpus, cross-checked against LAYOUTS.md,
 * which describes every other archive.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { robustnessArchives } from './corpus';
import { CORPUS_DIR_VAR, corpusArchives, corpusFile, describeWithCorpus } from './external';

describeWithCorpus('the robustness archives of the corpus', () => {
  test('are the corpus archives that LAYOUTS.md does not describe, each present', () => {
    const layouts = new Set(
      [...readFileSync(corpusFile('LAYOUTS.md'), 'utf8').matchAll(/^## (\S+\.tar\.gz)$/gm)].map((m) => m[1]),
    );
    expect(layouts.size).toBeGreaterThan(0);
    const listed = robustnessArchives();
    expect([...listed].sort()).toEqual(corpusArchives().filter((a) => !layouts.has(a)));
    expect(new Set(listed).size).toBe(listed.length);
  });
});

describe('robustnessArchives on a corpus directory of our own', () => {
  let dir: string;
  const saved = process.env[CORPUS_DIR_VAR];

  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tfguard-corpus-list-'));
    process.env[CORPUS_DIR_VAR] = dir;
  });

  afterEach(async () => {
    if (saved === undefined) delete process.env[CORPUS_DIR_VAR];
    else process.env[CORPUS_DIR_VAR] = saved;
    await rm(dir, { recursive: true, force: true });
  });

  test('the first table of SOURCES.md, in its order, including a listed archive that is missing', async () => {
    for (const name of ['b.tar.gz', 'a.tar.gz', 'layout.tar.gz']) await writeFile(path.join(dir, name), '');
    await writeFile(
      path.join(dir, 'SOURCES.md'),
      [
        '# Real-world corpus',
        '',
        '| tarball | repository |',
        '|---|---|',
        '| b.tar.gz | o/b |',
        '|  a.tar.gz  | o/a |',
        '| gone.tar.gz | o/gone |',
        '',
        '## Layout archives (added later)',
        '',
        '| tarball | repository |',
        '|---|---|',
        '| layout.tar.gz | o/layout |',
        '',
      ].join('\n'),
    );
    expect(robustnessArchives()).toEqual(['b.tar.gz', 'a.tar.gz', 'gone.tar.gz']);
  });

  test('empty when the directory holds no archives, even with a SOURCES.md', async () => {
    await writeFile(path.join(dir, 'SOURCES.md'), '| a.tar.gz | o/a |\n');
    expect(robustnessArchives()).toEqual([]);
  });

  test('an error, not an empty list, when SOURCES.md lists nothing', async () => {
    await writeFile(path.join(dir, 'a.tar.gz'), '');
    await writeFile(path.join(dir, 'SOURCES.md'), '# nothing here\n');
    expect(() => robustnessArchives()).toThrow(/no archives listed in .*SOURCES\.md/);
  });
});
