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
}

/** How long after the URL expired a pending request still answers 202 (a late PUT's scan may be
 * retried by Lambda for a while) before it is reported as expired. */
export const PENDING_GRACE_MS = 60 * 60 * 1000;

export const UPLOAD_FORMATS = ['tar.gz', 'tgz', 'tar', 'zip'] as const;
export type UploadFormat = (typeof UPLOAD_FORMATS)[number];
