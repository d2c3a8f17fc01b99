/**
 * Presigned POST uploads in tests: sending the HTML form as a browser or curl would (multipart,
 * the fields in order, the file last), reading the policy back, and checking the signature with the
 * AWS SDK's own SigV4 signer (`@smithy/signature-v4`), which s3rver does not verify.
 */
import { SignatureV4 } from '@smithy/signature-v4';
import type { ChecksumConstructor, HashConstructor } from '@smithy/types';

export interface PostForm {
  url: string;
  fields: Record<string, string>;
}

/** POSTs `fields` then `file` as multipart/form-data; `override` replaces or adds fields. */
export function postForm(
  form: PostForm,
  file: Buffer,
  override: Record<string, string> = {},
): Promise<Response> {
  const body = new FormData();
  for (const [name, value] of Object.entries({ ...form.fields, ...override })) body.append(name, value);
  body.append('file', new Blob([new Uint8Array(file)]), 'archive');
  return fetch(form.url, { method: 'POST', body });
}

export type PolicyCondition = Record<string, string> | [string, ...unknown[]];

export interface PostPolicy {
  expiration: string;
  conditions: PolicyCondition[];
}

export function decodePolicy(fields: Record<string, string>): PostPolicy {
  return JSON.parse(Buffer.from(fields.Policy!, 'base64').toString('utf8')) as PostPolicy;
}

/** The exact-match conditions (`{ field: value }` and `["eq", "$field", value]`), by field name. */
export function exactConditions(policy: PostPolicy): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of policy.conditions) {
    if (Array.isArray(c)) {
      if (c[0] === 'eq') out[String(c[1]).replace(/^\$/, '').toLowerCase()] = String(c[2]);
    } else {
      for (const [name, value] of Object.entries(c)) out[name.toLowerCase()] = value;
    }
  }
  return out;
}

export function contentLengthRange(policy: PostPolicy): [number, number] | undefined {
  const c = policy.conditions.find((x) => Array.isArray(x) && x[0] === 'content-length-range');
  return c === undefined ? undefined : [Number((c as unknown[])[1]), Number((c as unknown[])[2])];
}

/**
 * Form fields S3 would refuse because no policy condition names them ("each form field that you
 * specify in a form, except x-amz-signature, file, policy and x-ignore-* fields, must appear in the
 * list of conditions"), or whose value differs from an exact-match condition.
 */
export function fieldsOutsidePolicy(policy: PostPolicy, fields: Record<string, string>): string[] {
  const exact = exactConditions(policy);
  const named = new Set(Object.keys(exact));
  for (const c of policy.conditions)
    if (Array.isArray(c) && c[0] === 'starts-with') named.add(String(c[1]).replace(/^\$/, '').toLowerCase());
  return Object.entries(fields)
    .filter(([name]) => !['policy', 'x-amz-signature', 'file'].includes(name.toLowerCase()))
    .filter(([name]) => !name.toLowerCase().startsWith('x-ignore-'))
    .filter(([name, value]) => {
      const key = name.toLowerCase();
      return !named.has(key) || (key in exact && exact[key] !== value);
    })
    .map(([name]) => name)
    .sort();
}

/**
 * The signature S3 expects for the form: the base64 policy signed with the SigV4 signing key of the
 * credential's date, region and service, computed by the SDK's own signer.
 */
export async function expectedPostSignature(
  fields: Record<string, string>,
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string },
  sha256: ChecksumConstructor | HashConstructor,
): Promise<string> {
  const [, date, region, service] = fields['X-Amz-Credential']!.split('/');
  const amzDate = fields['X-Amz-Date']!;
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T` +
      `${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  if (amzDate.slice(0, 8) !== date) throw new Error('X-Amz-Date and the credential scope differ');
  const signer = new SignatureV4({ credentials, region: region!, service: service!, sha256 });
  return signer.sign(fields.Policy!, { signingDate });
}
