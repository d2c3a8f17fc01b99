/**
 * `POST /uploads` requests: the record stored when a presigned URL is handed out, completed by the
 * upload-triggered scan (see upload-scan.ts) so that `GET /scans/<uploadId>` can answer.
 */
import type { FailOn } from '../report/types';

export interface UploadRequestRecord {
  schemaVersion: 1;
  id: string;
  status: 'pending' | 'complete' | 'rejected';
  repository: string;
  bucket: string;
  key: string;
  failOn: FailOn;
  createdAt: string;
  /** When the presigned URL stops working. */
  expiresAt: string;
  /** The scan that answered the upload, once there is one. */
  scanId?: string;
  /** The caller's IAM ARN (API Gateway's IAM authorizer), bound to the repository and key; null
   * when the request carried no identity. Absent in records written before it was recorded. */
  uploadedBy?: string | null;
  /** The caller's principal id (`AWS:` + the IAM authorizer's `userId`), when known: with
   * `uploadedBy`, what the access policy checks the upload's scan against. */
  uploaderPrincipalId?: string;
  /** The largest upload the presigned POST accepts (`TFGUARD_MAX_ARCHIVE_BYTES` when issued). */
  maxBytes?: number;
  /** The `Content-Type` the presigned POST requires. */
  contentType?: string;
}

/** How long after the URL expired a pending request still answers 202 (a late PUT's scan may be
 * retried by Lambda for a while) before it is reported as expired. */
export const PENDING_GRACE_MS = 60 * 60 * 1000;

export const UPLOAD_FORMATS = ['tar.gz', 'tgz', 'tar', 'zip'] as const;
export type UploadFormat = (typeof UPLOAD_FORMATS)[number];

/** The `Content-Type` a presigned POST of each format must carry. */
export const UPLOAD_CONTENT_TYPES: Record<UploadFormat, string> = {
  'tar.gz': 'application/gzip',
  tgz: 'application/gzip',
  tar: 'application/x-tar',
  zip: 'application/zip',
};
