/** The corpus archives the suites walk, and reading and replicating them in tests. */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar-stream';
import { readArchiveBytes } from '../../src/archive';
import { shouldLoad } from '../../src/scan';
import { makeTarGz, type FileMap } from './archive';
import { corpusFile, corpusStatus } from './external';

/**
 * The robustness archives: the real configurations the corpus packed "for robustness tests and
 * benchmarks", as listed in the first table of its SOURCES.md (before its `## Layout archives`
 * section, whose archives test/corpus/layouts.test.ts reads), in that table's order, which seeded
 * suites depend on (test/hcl/differential/mutations.test.ts seeds each archive by its index).
 *
 * Derived from the corpus directory, so it is empty when the corpus is missing: the suites that
 * use it run inside describeWithCorpus, where an empty `it.each` is one skipped test (an empty
 * `describe.each` fails the file, so iterate it with `it.each`/`test.each`). A name listed
 * there but absent from the directory is kept, so the suite reading it fails rather than shrinks.
 */
export function robustnessArchives(): string[] {
  if (!corpusStatus().ok) return [];
  const sources = readFileSync(corpusFile('SOURCES.md'), 'utf8');
  const head = sources.split(/^## /m)[0] ?? '';
  const listed = [...head.matchAll(/^\|\s*([^|\s]+\.tar\.gz)\s*\|/gm)].map((m) => m[1] as string);
  if (listed.length === 0) throw new Error(`no archives listed in ${corpusFile('SOURCES.md')}`);
  return listed;
}

/** A corpus archive's bytes (the corpus is found by test/support/external.ts; suites that read
 * it run inside describeWithCorpus). */
export function readCorpusArchive(name: string): Promise<Buffer> {
  return readFile(corpusFile(name));
}

/** The configuration and lock files of a corpus archive (the files a scan parses), as loaded. */
export async function corpusFiles(archive: string): Promise<Map<string, Buffer>> {
  const loaded = await readArchiveBytes(archive, await readCorpusArchive(archive), { shouldLoad });
  const out = new Map<string, Buffer>();
  for (const [p, content] of loaded.files) {
    if (/\.(tf|tf\.json|tofu|tofu\.json|hcl)$/.test(p)) out.set(p, content);
  }
  return out;
}

/** The regular files of a .tar.gz, by path (a leading `./` removed), in archive order. */
export async function tarGzFiles(bytes: Buffer): Promise<Record<string, Buffer>> {
  const files: Record<string, Buffer> = {};
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => chunks.push(c as Buffer));
    stream.on('end', () => {
      if (header.type === 'file') files[header.name.replace(/^\.\//, '')] = Buffer.concat(chunks);
      next();
    });
    stream.resume();
  });
  const finished = new Promise<void>((resolve, reject) => {
    extract.on('finish', resolve);
    extract.on('error', reject);
  });
  const gunzip = createGunzip();
  gunzip.on('error', (err) => extract.destroy(err));
  gunzip.pipe(extract);
  gunzip.end(bytes);
  await finished;
  return files;
}

/** A real archive's files `copies` times, under `copy-1/` … `copy-N/`, as one .tar.gz. */
export async function replicateTarGz(bytes: Buffer, copies: number): Promise<Buffer> {
  const files = await tarGzFiles(bytes);
  const out: FileMap = {};
  for (let i = 1; i <= copies; i++) {
    for (const [name, content] of Object.entries(files)) out[`copy-${i}/${name}`] = content;
  }
  return makeTarGz(out);
}
