/**
 * Random archives for the property tests and the fuzz run: real configuration files from the
 * corpus (located by test/support/external.ts), mutated (bit flips, truncation, nesting bombs,
 * random UTF-8) or replaced by noise, packed as tar, tar.gz or zip in a chosen entry order.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { readArchiveBytes } from '../../src/archive';
import { buildTar } from './archive';
import { writeZip } from './zip-writer';
import { readCorpusArchive, robustnessArchives } from './corpus';

export interface CorpusFile {
  /** Path inside its corpus archive. */
  path: string;
  /** Base name (`main.tf`, `.terraform.lock.hcl`, ...). */
  name: string;
  content: Buffer;
}

/** Configuration and lock files of the corpus archives, at most `maxBytes` each. */
export async function loadCorpusFiles(maxBytes = 16 * 1024): Promise<CorpusFile[]> {
  const files: CorpusFile[] = [];
  // Smallest archive first (SOURCES.md lists the largest first): several archives hold files at
  // the same path, the sort below keeps them in this order, and fuzz seeds (scripts/fuzz.ts) and
  // the property tests' cases index into the result, so this order is part of what a seed means.
  for (const archiveName of robustnessArchives().reverse()) {
    const archive = await readArchiveBytes(archiveName, await readCorpusArchive(archiveName));
    for (const [path, content] of archive.files) {
      if (content.length > maxBytes) continue;
      const name = path.slice(path.lastIndexOf('/') + 1);
      if (name === '.tfguard.hcl') continue;
      files.push({ path, name, content });
    }
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return files;
}

export type ArchiveFormat = 'tar' | 'tar.gz' | 'zip';

export interface GeneratedEntry {
  path: string;
  content: Buffer;
}

export interface GeneratedArchive {
  format: ArchiveFormat;
  entries: GeneratedEntry[];
}

/** Pack entries in the order given. */
export async function pack(format: ArchiveFormat, entries: GeneratedEntry[]): Promise<Buffer> {
  if (format === 'zip') {
    return writeZip(entries.map((e) => ({ name: e.path, data: e.content, method: 'deflate' as const })));
  }
  const tar = await buildTar(entries.map((e) => ({ name: e.path, data: e.content })));
  return format === 'tar.gz' ? gzipSync(tar) : tar;
}

/** A corpus file changed the way a fuzzer would: bit flips, truncation, insertions. */
function mutated(file: fc.Arbitrary<CorpusFile>): fc.Arbitrary<Buffer> {
  const flips = fc.array(fc.record({ at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }), {
    minLength: 1,
    maxLength: 8,
  });
  const insertion = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => Buffer.from(s, 'utf8')),
    fc.uint8Array({ maxLength: 16 }).map((a) => Buffer.from(a)),
    fc
      .constantFrom('{', '[', '(', '${', '"', '<<EOT\n', '\ufeff', '\u201c', '\r\n', '}', ']')
      .map((s) => Buffer.from(s.repeat(3), 'utf8')),
  );
  return fc.oneof(
    fc.tuple(file, flips).map(([f, fs]) => {
      const out = Buffer.from(f.content);
      if (out.length === 0) return out;
      for (const { at, bit } of fs) {
        const i = at % out.length;
        out[i] = (out[i] as number) ^ (1 << bit);
      }
      return out;
    }),
    fc
      .tuple(file, fc.nat())
      .map(([f, n]) => f.content.subarray(0, f.content.length === 0 ? 0 : n % f.content.length)),
    fc.tuple(file, fc.nat(), insertion).map(([f, n, ins]) => {
      const i = f.content.length === 0 ? 0 : n % f.content.length;
      return Buffer.concat([f.content.subarray(0, i), ins, f.content.subarray(i)]);
    }),
  );
}

/** An expression nested `depth` levels deep, as a `locals` block. */
function nestingBomb(depth: number, open: string, close: string, closed: boolean): Buffer {
  return Buffer.from(
    `locals {\n  x = ${open.repeat(depth)}${closed ? close.repeat(depth) : ''}\n}\n`,
    'utf8',
  );
}

/** The content of one generated file. */
export function contentArbitrary(corpus: readonly CorpusFile[]): fc.Arbitrary<Buffer> {
  const file = fc.constantFrom(...corpus);
  return fc.oneof(
    { weight: 5, arbitrary: file.map((f) => f.content) },
    { weight: 4, arbitrary: mutated(file) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }).map((a) => Buffer.from(a)) },
    {
      weight: 1,
      arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map((s) => Buffer.from(s, 'utf8')),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.integer({ min: 100, max: 6000 }),
          fc.constantFrom<[string, string]>(['[', ']'], ['{a=', '}'], ['(', ')'], ['"${', '}"']),
          fc.boolean(),
        )
        .map(([depth, [open, close], closed]) => nestingBomb(depth, open, close, closed)),
    },
  );
}

const DIRECTORIES = ['', 'modules/vpc/', 'envs/prod/', 'envs/prod/modules/x/', 'ünï/'];
const NAMES = [
  'main.tf',
  'versions.tf',
  'variables.tf',
  'x.tf.json',
  'y.tofu',
  '.terraform.lock.hcl',
  'README.md',
];

/** A random archive of 1..`maxEntries` files with distinct paths. */
export function archiveArbitrary(
  corpus: readonly CorpusFile[],
  maxEntries = 6,
): fc.Arbitrary<GeneratedArchive> {
  const entry = fc.record({
    dir: fc.constantFrom(...DIRECTORIES),
    name: fc.oneof(
      fc.constantFrom(...NAMES),
      fc.constantFrom(...corpus).map((f) => f.name),
    ),
    content: contentArbitrary(corpus),
  });
  return fc.record({
    format: fc.constantFrom<ArchiveFormat>('tar.gz', 'tar', 'zip'),
    entries: fc
      .uniqueArray(entry, {
        minLength: 1,
        maxLength: maxEntries,
        selector: (e) => `${e.dir}${e.name}`.toLowerCase(),
      })
      .map((es) => es.map((e) => ({ path: `${e.dir}${e.name}`, content: e.content }))),
  });
}
