/**
 * The one tar / tar.gz writer for tests and scripts:
 * - `buildTar` / `buildTarGz`: tar-stream's packer for any entry it can express (files, directories,
 *   symlinks and hard links, devices, FIFOs, modes, long and non-ASCII names as ustar prefix or PAX);
 * - `makeTarGz`: the common case, a map of regular files;
 * - `rawTarHeader` / `tarData` / `paxHeader` / `rawTar`: raw blocks for what no well-behaved packer
 *   produces (non-UTF-8 names, v7 headers, odd type flags, lying sizes, hostile PAX records).
 * Entries carry a fixed mtime, so the same entries always give the same bytes.
 */
import { gzipSync } from 'node:zlib';
import * as tarStream from 'tar-stream';

export type FileMap = Record<string, string | Buffer>;

export interface TarEntrySpec {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'fifo' | 'character-device' | 'block-device';
  data?: Buffer | string;
  linkname?: string;
  mode?: number;
}

const MTIME = new Date('2024-01-01T00:00:00Z');

export async function buildTar(entries: TarEntrySpec[]): Promise<Buffer> {
  const pack = tarStream.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const chunk of pack) chunks.push(Buffer.from(chunk as Uint8Array));
  })();
  for (const spec of entries) {
    const type = spec.type ?? 'file';
    const header = {
      name: spec.name,
      type,
      mode: spec.mode ?? (type === 'directory' ? 0o755 : 0o644),
      mtime: MTIME,
      ...(spec.linkname === undefined ? {} : { linkname: spec.linkname }),
    };
    const data = type === 'file' ? Buffer.from(spec.data ?? '') : undefined;
    await new Promise<void>((resolve, reject) => {
      const callback = (err?: Error | null): void => (err ? reject(err) : resolve());
      if (data === undefined) pack.entry(header, callback);
      else pack.entry(header, data, callback);
    });
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

export async function buildTarGz(entries: TarEntrySpec[]): Promise<Buffer> {
  return gzipSync(await buildTar(entries));
}

/** Regular files (strings are UTF-8) as a real tar.gz, in the order given; directories are implied. */
export function makeTarGz(files: FileMap): Promise<Buffer> {
  return buildTarGz(Object.entries(files).map(([name, data]) => ({ name, data })));
}

function writeOctal(block: Buffer, offset: number, width: number, value: number): void {
  block.write(value.toString(8).padStart(width - 1, '0') + '\0', offset, width, 'latin1');
}

/** One raw 512-byte header with a correct checksum. `ustar: false` gives an old v7 header. */
export function rawTarHeader(options: {
  name: Buffer | string;
  size?: number;
  typeflag?: string;
  linkname?: Buffer | string;
  ustar?: boolean;
}): Buffer {
  const block = Buffer.alloc(512);
  Buffer.from(options.name).copy(block, 0, 0, 100);
  writeOctal(block, 100, 8, 0o644);
  writeOctal(block, 108, 8, 0);
  writeOctal(block, 116, 8, 0);
  writeOctal(block, 124, 12, options.size ?? 0);
  writeOctal(block, 136, 12, MTIME.getTime() / 1000);
  block.write(options.typeflag ?? '0', 156, 1, 'latin1');
  if (options.linkname !== undefined) Buffer.from(options.linkname).copy(block, 157, 0, 100);
  if (options.ustar !== false) {
    block.write('ustar\0', 257, 6, 'latin1');
    block.write('00', 263, 2, 'latin1');
  }
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
  return block;
}

/** File content padded to the 512-byte block size. */
export function tarData(data: Buffer | string): Buffer {
  const bytes = Buffer.from(data);
  const padded = Buffer.alloc(Math.ceil(bytes.length / 512) * 512);
  bytes.copy(padded);
  return padded;
}

/** The end-of-archive marker: two zero blocks. */
export const TAR_END = Buffer.alloc(1024);

/** A raw tar from header/data pieces, terminated properly. */
export function rawTar(...pieces: Buffer[]): Buffer {
  return Buffer.concat([...pieces, TAR_END]);
}

/** A PAX extended header (type `x`) carrying `records` (raw bytes allowed), followed by its data. */
export function paxHeader(records: Record<string, string | Buffer>): Buffer {
  const lines = Object.entries(records).map(([key, value]) => {
    const body = Buffer.concat([Buffer.from(` ${key}=`), Buffer.from(value), Buffer.from('\n')]);
    let length = body.length + 1;
    while (String(length).length + body.length !== length) length = String(length).length + body.length;
    return Buffer.concat([Buffer.from(String(length)), body]);
  });
  const data = Buffer.concat(lines);
  return Buffer.concat([
    rawTarHeader({ name: 'PaxHeader', size: data.length, typeflag: 'x' }),
    tarData(data),
  ]);
}
