import { InputError } from '../errors';

export type ArchiveFormat = 'tar' | 'tar.gz' | 'zip';

const TAR_BLOCK = 512;

/** True for a 512-byte block of zeros (a tar end-of-archive block). */
export function isZeroBlock(block: Uint8Array): boolean {
  for (const byte of block) if (byte !== 0) return false;
  return true;
}

function parseOctal(field: Uint8Array): number | null {
  let text = '';
  for (const byte of field) {
    if (byte === 0 || byte === 0x20) {
      if (text !== '') break;
      continue;
    }
    if (byte < 0x30 || byte > 0x37) return null;
    text += String.fromCharCode(byte);
  }
  return text === '' ? null : parseInt(text, 8);
}

/**
 * True when `block` (the first 512 bytes) is a tar header: POSIX/GNU `ustar` magic at offset 257,
 * or an old v7 header whose checksum field matches (unsigned, or the signed sum some old tars used).
 */
export function looksLikeTarHeader(block: Uint8Array): boolean {
  if (block.length < TAR_BLOCK) return false;
  if (Buffer.from(block.subarray(257, 262)).toString('latin1') === 'ustar') return true;
  const stored = parseOctal(block.subarray(148, 156));
  if (stored === null) return false;
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < TAR_BLOCK; i++) {
    const byte = i >= 148 && i < 156 ? 0x20 : (block[i] as number);
    unsigned += byte;
    signed += byte > 127 ? byte - 256 : byte;
  }
  // A header needs a name; an all-zero block has the checksum 256 but is not a header.
  return (stored === unsigned || stored === signed) && block[0] !== 0;
}

const OTHER_FORMATS: { magic: number[]; name: string }[] = [
  { magic: [0x42, 0x5a, 0x68], name: 'bzip2' },
  { magic: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], name: 'xz' },
  { magic: [0x28, 0xb5, 0x2f, 0xfd], name: 'zstd' },
  { magic: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], name: '7z' },
  { magic: [0x52, 0x61, 0x72, 0x21, 0x1a, 0x07], name: 'RAR' },
  { magic: [0x5d, 0x00, 0x00], name: 'lzma' },
];

function startsWith(bytes: Uint8Array, magic: number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b);
}

/** Identify the container from its content (never from the name). */
export function detectFormat(bytes: Uint8Array, name: string): ArchiveFormat {
  if (bytes.length === 0) {
    throw new InputError('empty-archive', `"${name}" is empty (0 bytes)`);
  }
  if (startsWith(bytes, [0x1f, 0x8b])) return 'tar.gz';
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04]) || startsWith(bytes, [0x50, 0x4b, 0x05, 0x06]))
    return 'zip';
  if (bytes.length >= TAR_BLOCK) {
    const first = bytes.subarray(0, TAR_BLOCK);
    if (looksLikeTarHeader(first)) return 'tar';
    // An archive of nothing but end-of-archive blocks is an (empty) tar.
    if (bytes.length % TAR_BLOCK === 0 && isZeroBlock(bytes)) return 'tar';
  } else if (bytes.length >= 262 && Buffer.from(bytes.subarray(257, 262)).toString('latin1') === 'ustar') {
    throw new InputError('truncated-archive', `"${name}" is a tar archive cut off inside its first header`);
  }
  for (const other of OTHER_FORMATS) {
    if (startsWith(bytes, other.magic)) {
      throw new InputError(
        'unsupported-format',
        `"${name}" is ${other.name}-compressed; upload a .tar.gz, .tar or .zip archive`,
      );
    }
  }
  throw new InputError(
    'unsupported-format',
    `"${name}" is not a tar, tar.gz or zip archive (the format is detected from the content, not the file name)`,
  );
}
