import type { Readable } from 'node:stream';
import { crc32 } from './crc32';
import * as yauzl from 'yauzl';
import { InputError } from '../errors';
import type { ArchiveBuilder, FileSink } from './builder';
import { ratioExceeded } from './limits';
import { decodeUtf8Name, displayName } from './paths';

const S_IFMT = 0o170000;
const FILE_TYPES: Record<number, string> = {
  0o140000: 'socket',
  0o120000: 'symlink',
  0o100000: 'file',
  0o060000: 'block-device',
  0o040000: 'directory',
  0o020000: 'character-device',
  0o010000: 'fifo',
};
/** "Version made by" hosts whose external attributes carry Unix mode bits (APPNOTE 4.4.2). */
const UNIX_HOSTS = new Set([3 /* Unix */, 19 /* OS X (Darwin) */]);
const INFO_ZIP_UNICODE_PATH = 0x7075;

function openZip(bytes: Buffer): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(
      bytes,
      { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, strictFileNames: false },
      (err, zipfile) => {
        if (err) reject(err);
        else resolve(zipfile);
      },
    );
  });
}

function mapOpenError(err: unknown, bytes: Buffer): InputError {
  const message = String((err as Error)?.message ?? err);
  if (/end of central directory record signature not found/i.test(message)) {
    // The central directory sits at the end: a zip that starts correctly but lacks it was cut off.
    const startsLikeZip = bytes.readUInt32LE(0) === 0x04034b50;
    return new InputError(
      startsLikeZip ? 'truncated-archive' : 'corrupt-archive',
      startsLikeZip
        ? 'the zip archive has no end-of-central-directory record: it is truncated'
        : 'the zip archive has no valid end-of-central-directory record',
      { cause: err },
    );
  }
  if (/multi-disk/i.test(message)) {
    return new InputError('unsupported-format', `multi-volume zip archives are not supported (${message})`, {
      cause: err,
    });
  }
  return new InputError('corrupt-archive', `cannot read the zip archive: ${message}`, { cause: err });
}

function mapEntryError(err: unknown, current: string | undefined): InputError {
  if (err instanceof InputError) return err;
  const message = String((err as Error)?.message ?? err);
  const where = current === undefined ? '' : ` (at "${current}")`;
  const options = { entry: current, cause: err };
  if (/unexpected EOF|overflows file bounds/i.test(message)) {
    return new InputError(
      'truncated-archive',
      `zip entry data runs past the end of the archive${where}`,
      options,
    );
  }
  if (/too many bytes in the stream|not enough bytes in the stream|size mismatch/i.test(message)) {
    return new InputError(
      'corrupt-archive',
      `zip entry content does not match its declared size (${message})${where}`,
      options,
    );
  }
  if (/strong encryption/i.test(message)) {
    return new InputError(
      'unsupported-entry-type',
      `encrypted zip entries are not supported${where}`,
      options,
    );
  }
  return new InputError('corrupt-archive', `cannot read the zip archive: ${message}${where}`, options);
}

/** The entry's name as UTF-8: the Info-ZIP Unicode Path extra field when it matches the header
 * name's CRC, otherwise the header name itself, which must be valid UTF-8 (flagged or not: legacy
 * CP437 names are not guessed at). */
function entryName(entry: yauzl.Entry): string {
  const raw = entry.fileNameRaw;
  for (const field of entry.extraFields) {
    if (field.id !== INFO_ZIP_UNICODE_PATH || field.data.length < 5 || field.data[0] !== 1) continue;
    if (field.data.readUInt32LE(1) !== crc32(raw)) continue;
    return decodeUtf8Name(field.data.subarray(5), 'entry name');
  }
  return decodeUtf8Name(raw, 'entry name');
}

function readSmall(stream: Readable, max: number, shown: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    stream.on('data', (chunk: Buffer) => {
      length += chunk.length;
      if (length > max) {
        stream.destroy();
        reject(
          new InputError('path-too-long', `symlink "${shown}" has a target longer than ${max} bytes`, {
            entry: shown,
          }),
        );
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/**
 * Read a zip archive held in memory (yauzl, central directory first, entries one at a time).
 * Nothing is inflated before the declared sizes have passed the limits; the inflated bytes are
 * counted again while streaming and the CRC-32 of every file is verified.
 */
export async function scanZip(bytes: Buffer, builder: ArchiveBuilder): Promise<void> {
  const limits = builder.limits;
  let zipfile: yauzl.ZipFile;
  try {
    zipfile = await openZip(bytes);
  } catch (err) {
    throw mapOpenError(err, bytes);
  }
  if (zipfile.entryCount > limits.maxEntries) {
    zipfile.close();
    throw new InputError(
      'too-many-entries',
      `the zip archive declares ${zipfile.entryCount} entries, more than the limit of ${limits.maxEntries}`,
    );
  }
  const zip = zipfile;

  await new Promise<void>((resolve, reject) => {
    let settled = false;
    let current: string | undefined;
    let active: Readable | null = null;
    let declaredTotal = 0;
    let inflatedTotal = 0;

    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      active?.destroy();
      zip.close();
      reject(mapEntryError(err, current));
    };
    const nextEntry = (): void => {
      current = undefined;
      active = null;
      if (!settled) zip.readEntry();
    };

    const checkRatio = (total: number, declared: boolean): void => {
      if (ratioExceeded(limits, total, bytes.length)) {
        throw new InputError(
          'compression-ratio',
          `compression ratio exceeds ${limits.maxCompressionRatio}:1 (${bytes.length} compressed bytes ${declared ? 'declare' : 'inflate to'} more than ${total})${current === undefined ? '' : ` at "${current}"`}: refusing a possible decompression bomb`,
          { entry: current },
        );
      }
    };

    const openStream = (entry: yauzl.Entry, onStream: (stream: Readable) => void): void => {
      zip.openReadStream(entry, (err, stream) => {
        if (settled) {
          stream?.destroy();
          return;
        }
        if (err) {
          fail(err);
          return;
        }
        active = stream;
        stream.on('error', (streamErr: unknown) => fail(streamErr));
        onStream(stream);
      });
    };

    const handleEntry = (entry: yauzl.Entry): void => {
      const name = entryName(entry);
      const shown = displayName(name);
      current = shown;
      builder.countEntry(shown);

      if (entry.isEncrypted()) {
        throw new InputError(
          'unsupported-entry-type',
          `"${shown}" is encrypted; encrypted zip entries are not supported`,
          {
            entry: shown,
          },
        );
      }
      const host = entry.versionMadeBy >> 8;
      const attributes = entry.externalFileAttributes >>> 16;
      const unixMode = UNIX_HOSTS.has(host) && attributes !== 0 ? attributes : undefined;
      const mode = unixMode === undefined ? undefined : unixMode & 0o7777;
      const unixType = unixMode === undefined ? undefined : FILE_TYPES[unixMode & S_IFMT];
      const namedAsDirectory = name.endsWith('/') || name.endsWith('\\');
      let type: 'file' | 'directory' | 'symlink';
      if (
        namedAsDirectory ||
        unixType === 'directory' ||
        (unixType === undefined && (entry.externalFileAttributes & 0x10) !== 0)
      ) {
        type = 'directory';
      } else if (unixType === 'symlink') {
        type = 'symlink';
      } else if (unixType === undefined || unixType === 'file') {
        type = 'file';
      } else {
        throw new InputError(
          'unsupported-entry-type',
          `"${shown}" is a ${unixType} entry, which is not allowed`,
          {
            entry: shown,
          },
        );
      }

      const path = builder.admit(name, type === 'directory');
      if (path === null) {
        nextEntry();
        return;
      }
      if (type === 'directory') {
        builder.addDirectory(path, shown, mode);
        nextEntry();
        return;
      }
      if (entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
        throw new InputError(
          'unsupported-entry-type',
          `"${shown}" uses zip compression method ${entry.compressionMethod}; only stored and deflated entries are supported`,
          { entry: shown },
        );
      }
      declaredTotal += entry.uncompressedSize;
      checkRatio(declaredTotal, true);

      if (type === 'symlink') {
        openStream(entry, (stream) => {
          readSmall(stream, limits.maxPathLength, shown).then(
            (content) => {
              if (settled) return;
              try {
                const target = decodeUtf8Name(content, 'symlink target', shown);
                builder.addLink(path, shown, 'symlink', target, { mode });
              } catch (err) {
                fail(err);
                return;
              }
              nextEntry();
            },
            (err: unknown) => fail(err),
          );
        });
        return;
      }

      const sink: FileSink = builder.beginFile(path, shown, entry.uncompressedSize, mode);
      openStream(entry, (stream) => {
        let crc = 0;
        stream.on('data', (chunk: Buffer) => {
          if (settled) return;
          try {
            inflatedTotal += chunk.length;
            checkRatio(inflatedTotal, false);
            crc = crc32(chunk, crc);
            sink.write(chunk);
          } catch (err) {
            fail(err);
          }
        });
        stream.on('end', () => {
          if (settled) return;
          try {
            if (crc >>> 0 !== entry.crc32 >>> 0) {
              throw new InputError(
                'corrupt-archive',
                `CRC-32 mismatch in "${shown}": the zip archive is corrupt`,
                {
                  entry: shown,
                },
              );
            }
            sink.finish();
          } catch (err) {
            fail(err);
            return;
          }
          nextEntry();
        });
      });
    };

    zip.on('error', (err: unknown) => fail(err));
    zip.on('entry', (entry: yauzl.Entry) => {
      if (settled) return;
      try {
        handleEntry(entry);
      } catch (err) {
        fail(err);
      }
    });
    zip.on('end', () => {
      if (settled) return;
      settled = true;
      zip.close();
      resolve();
    });
    zip.readEntry();
  });
}
