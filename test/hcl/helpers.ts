import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';
import * as tar from 'tar-stream';
import { Hcl2JsonPool } from '../../src/hcl/full/pool';
import type { HclBody } from '../../src/model';

/**
 * Rebuilds the JSON hcl2json produces for a body from an `HclBody`: blocks grouped as
 * `obj[type][label1]...[labelN]` = array of bodies, attributes as `obj[name]`.
 */
export function hcl2jsonShape(body: HclBody): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const b of body.blocks) {
    let node = out;
    const keys = [b.type, ...b.labels];
    for (const k of keys.slice(0, -1)) {
      node[k] ??= {};
      node = node[k] as Record<string, unknown>;
    }
    const last = keys[keys.length - 1] as string;
    ((node[last] ??= []) as unknown[]).push(hcl2jsonShape(b.body));
  }
  for (const a of body.attributes) out[a.name] = a.value;
  return out;
}

let reference: Hcl2JsonPool | null = null;

/** hcl2json's own output for `text` (in a worker thread, untouched by tfguard's merge). */
export async function referenceParse(text: string): Promise<unknown> {
  reference ??= new Hcl2JsonPool({ size: 1, hcl2jsonPath: require.resolve('@cdktf/hcl2json') });
  const outcome = await reference.run('input.hcl', text, 60_000);
  if (outcome.kind !== 'ok') throw new Error(`hcl2json failed: ${JSON.stringify(outcome)}`);
  return outcome.json;
}

export async function closeReference(): Promise<void> {
  await reference?.close();
  reference = null;
}

/** The regular files of a .tar.gz whose names match `pattern`, in archive order. */
export async function readTarGz(path: string, pattern: RegExp): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: unknown) => chunks.push(c as Buffer));
    stream.on('end', () => {
      if (header.type === 'file' && pattern.test(header.name)) files.set(header.name, Buffer.concat(chunks));
      next();
    });
    stream.resume();
  });
  await new Promise<void>((resolve, reject) => {
    const input = createReadStream(path);
    input.on('error', reject);
    const gunzip = createGunzip();
    gunzip.on('error', reject);
    extract.on('error', reject);
    extract.on('finish', () => resolve());
    input.pipe(gunzip).pipe(extract);
  });
  return files;
}
