/**
 * S3 user metadata travels in HTTP headers, which carry ASCII only. S3 decodes RFC 2047
 * encoded-words in `x-amz-meta-*` values on write and encodes non-ASCII values the same way on read
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/UsingMetadata.html); S3-compatible servers
 * may store the header bytes as they come. Encoding non-ASCII values on write and decoding
 * encoded-words on read gives the same round trip against both.
 */

const NEEDS_ENCODING = /[^\u0020-\u007e]/;

export function encodeMetadataValue(value: string): string {
  if (!NEEDS_ENCODING.test(value)) return value;
  return `=?UTF-8?B?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

const ENCODED_WORD = /=\?([^?\s]+)\?([BbQq])\?([^?\s]*)\?=/g;

function decodeWord(charset: string, encoding: string, text: string): string | null {
  const cs = charset.toLowerCase().split('*')[0];
  if (cs !== 'utf-8' && cs !== 'us-ascii' && cs !== 'iso-8859-1') return null;
  let bytes: Buffer;
  if (encoding.toUpperCase() === 'B') {
    bytes = Buffer.from(text, 'base64');
  } else {
    const ascii = text.replace(/_/g, ' ');
    const out: number[] = [];
    for (let i = 0; i < ascii.length; i++) {
      const hex = ascii.slice(i + 1, i + 3);
      if (ascii[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
        out.push(parseInt(hex, 16));
        i += 2;
      } else {
        out.push(ascii.charCodeAt(i));
      }
    }
    bytes = Buffer.from(out);
  }
  return cs === 'iso-8859-1' ? bytes.toString('latin1') : bytes.toString('utf8');
}

export function decodeMetadataValue(value: string): string {
  if (!value.includes('=?')) return value;
  // Whitespace between adjacent encoded-words is not part of the text (RFC 2047 section 6.2).
  const joined = value.replace(/\?=\s+=\?/g, '?==?');
  return joined.replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => {
    return decodeWord(charset, encoding, text) ?? word;
  });
}

export function encodeMetadata(metadata: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata).map(([k, v]) => [k.toLowerCase(), encodeMetadataValue(v)]),
  );
}

export function decodeMetadata(metadata: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(metadata ?? {}).map(([k, v]) => [k.toLowerCase(), decodeMetadataValue(v)]),
  );
}
