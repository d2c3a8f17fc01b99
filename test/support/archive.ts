import * as zlib from 'node:zlib';
import * as tar from 'tar-stream';

export type FileMap = Record<string, string | Buffer>;

/** Packs files into a real tar.gz, in the order given (directories are implied). */
export async function makeTarGz(files: FileMap): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    const gz = zlib.createGzip();
    gz.on('data', (c: Buffer) => chunks.push(c));
    gz.on('end', () => resolve(Buffer.concat(chunks)));
    gz.on('error', reject);
    pack.pipe(gz);
  });
  for (const [name, content] of Object.entries(files)) {
    const body = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name, size: body.length, mode: 0o644 }, body, (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  return done;
}
