/** Reading and replicating real-configuration corpus archives in tests. */
import { readFile } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar-stream';
import { makeTarGz, type FileMap } from './archive';
import { corpusFile } from './external';

/** A corpus archive's bytes (the corpus is found by test/support/external.ts; suites that read
 * it run inside describeWithCorpus). */
export function readCorpusArchive(name: string): Promise<Buffer> {
  return readFile(corpusFile(name));
}

/** The regular files of a .tar.gz, by path. */
export async function tarGzFiles(bytes: Buffer): Promise<FileMap> {
  const files: FileMap = {};
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
