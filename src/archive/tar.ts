import { Readable, Transform, type TransformCallback } from 'node:stream';
import { createGunzip } from 'node:zlib';
import * as tarStream from 'tar-stream';
import { InputError } from '../errors';
import type { ArchiveBuilder, FileSink } from './builder';
import { isZeroBlock, looksLikeTarHeader } from './detect';
import { maxContainerBytes, ratioExceeded } from './limits';
import { displayName, displaysAsIs, latin1ToUtf8 } from './paths';

const BLOCK = 512;
const FEED_CHUNK = 1024 * 1024;
/** tar-stream's own cap on one PAX / GNU long-name header (`MAX_HEADER_SIZE` in extract.js). */
const MAX_EXTENDED_HEADER = 4 * 1024 * 1024;

/** The tar-stream internals `watchZeroBlocks` relies on (tar-stream 3.x, extract.js). */
interface ExtractInternals {
  _consumeHeader(): boolean;
  _header: unknown;
  _buffer: { shifted: number };
}

/**
 * tar-stream skips all-zero header blocks silently and keeps reading entries after them, while tar,
 * bsdtar and Terraform users' extractors stop at the end-of-archive marker (GNU tar warns about a
 * lone zero block). An archive with entries after such a block would show tfguard files that an
 * extraction does not produce (a `versions.tf` that satisfies a rule, say). This hooks the header
 * parser to report every zero block it consumes, so the reader can refuse what follows.
 */
function watchZeroBlocks(extract: unknown, onZeroBlock: (offset: number) => void): void {
  const internals = extract as Partial<ExtractInternals>;
  const original = internals._consumeHeader;
  if (typeof original !== 'function' || typeof internals._buffer?.shifted !== 'number') {
    throw new Error('unsupported tar-stream version: cannot watch for end-of-archive blocks');
  }
  internals._consumeHeader = function (this: ExtractInternals): boolean {
    const before = this._buffer.shifted;
    const consumed = original.call(this);
    if (this._buffer.shifted === before + BLOCK && this._header === null) onZeroBlock(before);
    return consumed;
  };
}

/** The header tar-stream emits, including fields its typings omit. `type` is null for a type
 * flag tar-stream does not know (GNU sparse, volume labels, ...). */
export interface TarHeader {
  name: string;
  size?: number;
  mode?: number;
  type: string | null;
  linkname?: string | null;
  byteOffset?: number;
  pax?: Record<string, string> | null;
}

/** The per-entry stream (a streamx Readable) as used here. */
interface EntryStream {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (err: unknown) => void): unknown;
}

function roundUpToBlock(n: number): number {
  return Math.ceil(n / BLOCK) * BLOCK;
}

function* chunksOf(bytes: Buffer): Generator<Buffer> {
  for (let offset = 0; offset < bytes.length; offset += FEED_CHUNK) {
    yield bytes.subarray(offset, Math.min(offset + FEED_CHUNK, bytes.length));
  }
}

/** Decode the entry name. tar-stream is asked for latin1 (one char per byte) so the original bytes
 * can be recovered and checked as strict UTF-8; PAX `path` records are UTF-8 by definition and are
 * decoded by tar-stream itself (invalid sequences become U+FFFD, which is rejected). */
function decodeHeaderString(value: string, fromPax: boolean, what: string, entry?: string): string {
  if (fromPax) {
    if (value.includes('\uFFFD')) {
      const shown = displayName(value);
      throw new InputError('invalid-path', `${what} in a PAX header is not valid UTF-8: "${shown}"`, {
        entry: entry ?? shown,
      });
    }
    return value;
  }
  return latin1ToUtf8(value, what, entry);
}

/** Where the stream was when it failed, for messages. */
interface StreamPosition {
  /** The entry whose content was being read. */
  current: string | undefined;
  /** The last entry read completely (a bad header right after it usually means its declared size
   * was a lie). */
  previous: string | undefined;
  /** Byte offset of the first all-zero header block seen (an end-of-archive block), if any. */
  zeroBlockAt: number | null;
}

function mapStreamError(err: unknown, position: StreamPosition, gzip: boolean): InputError {
  if (err instanceof InputError) return err;
  const { current, previous, zeroBlockAt } = position;
  const error = err as NodeJS.ErrnoException;
  const message = String(error?.message ?? err);
  const where =
    current !== undefined
      ? ` (while reading "${current}")`
      : previous !== undefined
        ? ` (after "${previous}")`
        : '';
  const options = { entry: current ?? previous, cause: err };
  if (/header exceeds max size/i.test(message)) {
    return new InputError(
      'corrupt-archive',
      `an extended header (PAX or GNU long name) is larger than tar-stream's limit of ${MAX_EXTENDED_HEADER / (1024 * 1024)} MiB${where}`,
      options,
    );
  }
  if (zeroBlockAt !== null && !/^Z_/.test(String(error?.code ?? ''))) {
    // Extractors stop at the end-of-archive marker; whatever follows it would not be extracted.
    return new InputError(
      'corrupt-archive',
      `the ${gzip ? 'tar.gz' : 'tar'} archive has data after its end-of-archive block at byte ${zeroBlockAt} (${message})`,
      options,
    );
  }
  if (error?.code === 'Z_BUF_ERROR' || /unexpected end of file/i.test(message)) {
    return new InputError(
      'truncated-archive',
      `gzip data ends unexpectedly: the archive is truncated${where}`,
      options,
    );
  }
  if (typeof error?.code === 'string' && error.code.startsWith('Z_')) {
    return new InputError('corrupt-archive', `gzip data is corrupt (${message})${where}`, options);
  }
  if (/unexpected end of data/i.test(message)) {
    return new InputError(
      'truncated-archive',
      `tar data ends in the middle of an entry: the archive is truncated${where}`,
      options,
    );
  }
  if (/invalid tar header|invalid header|header exceeds max size/i.test(message)) {
    return new InputError(
      'corrupt-archive',
      `${gzip ? 'tar.gz' : 'tar'} archive has an invalid header (${message})${where}`,
      options,
    );
  }
  return new InputError(
    'corrupt-archive',
    `cannot read the ${gzip ? 'tar.gz' : 'tar'} archive: ${message}${where}`,
    options,
  );
}

/**
 * Feed one tar entry's header into the builder: decode and validate the name, count the entry,
 * admit the path and start the file (returned, for its content) or record the directory or link.
 * Shared by the streaming reader below and the in-memory fast path (tar-fast.ts), so both apply
 * exactly the same checks in the same order.
 */
export function beginTarEntry(
  header: TarHeader,
  builder: ArchiveBuilder,
  state: { zeroBlockAt: number | null; onName?: (shown: string) => void },
): FileSink | null {
  const size = header.size ?? 0;
  const name = decodeHeaderString(header.name, header.pax?.path !== undefined, 'entry name');
  // Nearly every name shows as it is: one test instead of a replace per entry.
  const shown = displaysAsIs(name) ? name : displayName(name);
  state.onName?.(shown);
  if (state.zeroBlockAt !== null) {
    throw new InputError(
      'corrupt-archive',
      `"${shown}" comes after the end-of-archive block at byte ${state.zeroBlockAt}: tar stops reading there, so it would not be extracted`,
      { entry: shown },
    );
  }
  builder.countEntry(shown);
  // Old tars mark directories only by a trailing '/' on a regular-file entry (tar-stream
  // means to convert these but computes the type before doing so).
  const type = header.type === 'file' && /[/\\]$/.test(name) ? 'directory' : header.type;
  const path = builder.admit(name, type === 'directory');
  const mode = header.mode === undefined ? undefined : header.mode & 0o7777;
  switch (type) {
    case 'file':
    case 'contiguous-file':
      return path === null ? null : builder.beginFile(path, shown, size, mode);
    case 'directory':
      if (path !== null) builder.addDirectory(path, shown, mode);
      return null;
    case 'symlink':
    case 'link': {
      const target = decodeHeaderString(
        header.linkname ?? '',
        header.pax?.linkpath !== undefined,
        'link target',
        shown,
      );
      if (path !== null) {
        builder.addLink(path, shown, type === 'symlink' ? 'symlink' : 'hardlink', target, { mode });
      }
      return null;
    }
    default:
      throw new InputError(
        'unsupported-entry-type',
        type === null
          ? `"${shown}" has a tar entry type tfguard does not read (GNU sparse file, volume label, ...), which is not allowed`
          : `"${shown}" is a ${type} entry, which is not allowed`,
        { entry: shown },
      );
  }
}

/**
 * Stream a tar (optionally gzip-compressed) archive held in memory through tar-stream into the
 * builder. The gunzip output is metered as it is produced: the ratio and size limits stop
 * inflation as soon as they are exceeded. Resolves once the end-of-archive marker has been read.
 */
export function scanTar(bytes: Buffer, gzip: boolean, builder: ArchiveBuilder): Promise<void> {
  const limits = builder.limits;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    let current: string | undefined;
    let previous: string | undefined;
    let zeroBlockAt: number | null = null;
    let tarBytes = 0;
    let lastEntryEnd = 0;
    const destroyables: { destroy(err?: Error): unknown }[] = [];

    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      for (const stream of destroyables) stream.destroy();
      reject(mapStreamError(err, { current, previous, zeroBlockAt }, gzip));
    };

    // Options tar-stream reads but its typings omit (see node_modules/tar-stream/extract.js).
    const extractOptions = { filenameEncoding: 'latin1', allowUnknownFormat: true };
    const extract = tarStream.extract(extractOptions as Parameters<typeof tarStream.extract>[0]);
    destroyables.push(extract);
    watchZeroBlocks(extract, (offset) => {
      if (zeroBlockAt === null) zeroBlockAt = offset;
    });

    extract.on('entry', (rawHeader, rawStream, next) => {
      const header = rawHeader as unknown as TarHeader;
      const stream = rawStream as unknown as EntryStream;
      stream.on('error', (err: unknown) => fail(err));
      if (settled) return;
      let sink: FileSink | null = null;
      try {
        const size = header.size ?? 0;
        lastEntryEnd = (header.byteOffset ?? 0) + roundUpToBlock(size);
        sink = beginTarEntry(header, builder, {
          zeroBlockAt,
          onName: (shown) => {
            current = shown;
          },
        });
      } catch (err) {
        fail(err);
        return;
      }
      const activeSink = sink;
      stream.on('data', (chunk: Buffer) => {
        if (settled || activeSink === null) return;
        try {
          activeSink.write(chunk);
        } catch (err) {
          fail(err);
        }
      });
      stream.on('end', () => {
        if (settled) return;
        try {
          activeSink?.finish();
        } catch (err) {
          fail(err);
          return;
        }
        previous = current;
        current = undefined;
        next();
      });
    });

    extract.on('error', (err: unknown) => fail(err));
    extract.on('finish', () => {
      if (settled) return;
      // tar-stream accepts a stream that simply stops between entries; a real archive ends with
      // at least one zero block. Without it the archive was cut off at an entry boundary.
      if (tarBytes < lastEntryEnd + BLOCK) {
        fail(
          new InputError(
            'truncated-archive',
            `the ${gzip ? 'tar.gz' : 'tar'} archive has no end-of-archive marker: it is truncated`,
          ),
        );
        return;
      }
      settled = true;
      resolve();
    });
    extract.on('close', () => {
      if (!settled) fail(new InputError('truncated-archive', 'the tar stream ended unexpectedly'));
    });

    if (!gzip) {
      tarBytes = bytes.length;
      const source = Readable.from(chunksOf(bytes));
      destroyables.push(source);
      source.on('error', (err: unknown) => fail(err));
      source.pipe(extract as unknown as NodeJS.WritableStream);
      return;
    }

    const gunzip = createGunzip({ chunkSize: 64 * 1024 });
    let head: Buffer = Buffer.alloc(0);
    let headChecked = false;
    const checkHead = (final: boolean): void => {
      if (headChecked) return;
      if (head.length < BLOCK && !final) return;
      headChecked = true;
      if (head.length === 0) {
        throw new InputError('empty-archive', 'the gzip stream is empty');
      }
      const block = head.subarray(0, BLOCK);
      if (block.length < BLOCK || !(looksLikeTarHeader(block) || isZeroBlock(block))) {
        throw new InputError('unsupported-format', 'the gzip stream does not contain a tar archive');
      }
    };
    const meter = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
        tarBytes += chunk.length;
        try {
          if (!headChecked) {
            head = Buffer.concat([head, chunk.subarray(0, BLOCK)]);
            checkHead(false);
          }
          if (ratioExceeded(limits, tarBytes, bytes.length)) {
            throw new InputError(
              'compression-ratio',
              `compression ratio exceeds ${limits.maxCompressionRatio}:1 (${bytes.length} compressed bytes inflate to more than ${tarBytes})${current === undefined ? '' : ` at "${current}"`}: refusing a possible decompression bomb`,
              { entry: current },
            );
          }
          if (tarBytes > maxContainerBytes(limits)) {
            throw new InputError(
              'total-too-large',
              `the uncompressed tar stream exceeds ${maxContainerBytes(limits)} bytes`,
              {
                entry: current,
              },
            );
          }
        } catch (err) {
          callback(err as Error);
          return;
        }
        callback(null, chunk);
      },
      flush(callback: TransformCallback): void {
        try {
          checkHead(true);
        } catch (err) {
          callback(err as Error);
          return;
        }
        callback();
      },
    });
    destroyables.push(gunzip, meter);
    gunzip.on('error', (err: unknown) => fail(err));
    meter.on('error', (err: unknown) => fail(err));
    gunzip.pipe(meter).pipe(extract as unknown as NodeJS.WritableStream);
    gunzip.end(bytes);
  });
}
