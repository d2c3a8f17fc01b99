import fc from 'fast-check';
import { assertValidKey } from '../../src/storage/keys';
import {
  ReportLayout,
  apiScanId,
  auditRunId,
  normalizeRepository,
  repositoryFromKey,
  repositoryKey,
  uploadScanId,
  RUN_ID_PATTERN,
  SCAN_ID_PATTERN,
} from '../../src/service/keys';
import {
  decodeS3EventKey,
  encodeS3EventKey,
  parseS3Event,
  repositoryForUpload,
} from '../../src/service/uploads';

describe('scan ids', () => {
  test('the same upload always maps to the same scan id; any part changing changes it', () => {
    const ref = { bucket: 'b', key: 'uploads/org/repo/x.tar.gz', etag: '9dd4e461268c8034f5c8564e155c67a6' };
    expect(uploadScanId(ref)).toBe(uploadScanId({ ...ref }));
    expect(uploadScanId(ref)).toMatch(SCAN_ID_PATTERN);
    const others = [
      { ...ref, bucket: 'c' },
      { ...ref, key: 'uploads/org/repo/y.tar.gz' },
      { ...ref, etag: '0dd4e461268c8034f5c8564e155c67a6' },
      { ...ref, versionId: 'v1' },
    ].map(uploadScanId);
    expect(new Set([uploadScanId(ref), ...others]).size).toBe(5);
    // With a version id, the version names the content (the ETag is not needed).
    expect(uploadScanId({ ...ref, versionId: 'v1' })).toBe(
      uploadScanId({ ...ref, etag: 'other', versionId: 'v1' }),
    );
  });

  test('API scan ids depend on the repository and the archive hash', () => {
    expect(apiScanId('a/b', 'f'.repeat(64))).toBe(apiScanId('a/b', 'f'.repeat(64)));
    expect(apiScanId('a/b', 'f'.repeat(64))).not.toBe(apiScanId(null, 'f'.repeat(64)));
    expect(apiScanId('a/b', 'f'.repeat(64))).not.toBe(apiScanId('a/b', 'e'.repeat(64)));
  });

  test('audit run ids sort by time and are stable for one schedule event', () => {
    const a = auditRunId(new Date('2025-01-01T03:00:00Z'), 'event-1');
    expect(a).toMatch(RUN_ID_PATTERN);
    expect(a.startsWith('20250101T030000000Z-')).toBe(true);
    expect(auditRunId(new Date('2025-01-01T03:00:00.001Z'), 'event-0') > a).toBe(true);
    expect(auditRunId(new Date('2025-01-01T03:00:00Z'), 'event-1')).toBe(a);
    expect(auditRunId(new Date('2025-01-02T03:00:00Z'), 'event-0') > a).toBe(true);
  });
});

describe('repository names and keys', () => {
  test.each([
    ['org/repo', 'org/repo'],
    ['  org//repo/ ', 'org/repo'],
    ['github.com/acme/infra live', 'github.com/acme/infra live'],
    ['équipe/dépôt', 'équipe/dépôt'],
    ['', null],
    ['///', null],
    ['org/../etc', null],
    ['org/./x', null],
    ['a\\b', null],
    ['a\nb', null],
    ['x'.repeat(257), null],
  ])('normalizeRepository(%j) = %j', (raw, expected) => {
    expect(normalizeRepository(raw)).toBe(expected);
  });

  test('repository keys are valid keys, injective and reversible', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 12, unit: 'grapheme' }), {
          minLength: 1,
          maxLength: 4,
        }),
        (segments) => {
          const name = normalizeRepository(segments.join('/'));
          if (name === null) return;
          const key = repositoryKey(name);
          assertValidKey(`reports/repos/${key}/@latest.json`);
          expect(repositoryFromKey(key)).toBe(name);
          expect(key.split('/').some((s) => s.startsWith('@'))).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
    expect(repositoryKey('org/..')).not.toBe(repositoryKey('org/%2E%2E'));
    expect(repositoryKey('a/b c+d%')).toBe('a/b%20c%2Bd%25');
  });

  test('the layout keeps everything under the reports prefix and finds repositories back', () => {
    const layout = new ReportLayout('reports/');
    const scanId = 'a'.repeat(32);
    const keys = [
      ...Object.values(layout.reports(scanId)),
      layout.rejected(scanId),
      layout.latest('org/my repo'),
      layout.uploadRequest('0b5a4c1e-3f9e-4b1a-9a56-2c7d9b1f0e11'),
      layout.auditLatest,
      layout.auditRun('20250101T030000Z-00000000').summaryJson,
      layout.registryCachePrefix + 'x',
    ];
    for (const key of keys) {
      expect(key.startsWith('reports/')).toBe(true);
      assertValidKey(key);
    }
    expect(layout.reports(scanId)).toEqual({
      json: `reports/scans/${scanId}/report.json`,
      sarif: `reports/scans/${scanId}/report.sarif`,
      markdown: `reports/scans/${scanId}/report.md`,
    });
    expect(layout.repositoryOfLatest(layout.latest('org/my repo'))).toBe('org/my repo');
    expect(layout.repositoryOfLatest('reports/repos/x/other.json')).toBeNull();
    const run = layout.auditRun('20250101T030000Z-00000000');
    expect(run.repositoryOfDone(3, run.done(3, 'a/@latest.json'))).toBe('a/@latest.json');
  });
});

describe('S3 event keys', () => {
  test('decodes form-style URL encoding: + is a space, %2B is a plus', () => {
    expect(decodeS3EventKey('uploads/my+repo/a%2Bb+%25.tar.gz')).toBe('uploads/my repo/a+b %.tar.gz');
    expect(decodeS3EventKey('uploads/caf%C3%A9/%E6%97%A5%E6%9C%AC.zip')).toBe('uploads/café/日本.zip');
    expect(() => decodeS3EventKey('uploads/bad%E0%A4%A.zip')).toThrow(/malformed URL-encoded object key/);
  });

  test('encode and decode are inverse for any key', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), (key) => {
        const encoded = encodeS3EventKey(key);
        expect(encoded).not.toMatch(/[ ]/);
        expect(decodeS3EventKey(encoded)).toBe(key);
      }),
      { numRuns: 500 },
    );
  });

  test('every record is read; malformed records are reported without hiding the others', () => {
    const good = (key: string) => ({
      eventSource: 'aws:s3',
      eventName: 'ObjectCreated:Put',
      s3: { bucket: { name: 'b' }, object: { key, size: 3, eTag: 'abc', versionId: 'v1', sequencer: '01' } },
    });
    const parsed = parseS3Event({
      Records: [
        good('uploads/a+b.zip'),
        { eventSource: 'aws:sqs' },
        good('uploads/%ZZ.zip'),
        good('uploads/c.tgz'),
      ],
    });
    expect(parsed.records.map((r) => r.key)).toEqual(['uploads/a b.zip', 'uploads/c.tgz']);
    expect(parsed.records[0]).toMatchObject({ bucket: 'b', size: 3, etag: 'abc', versionId: 'v1' });
    expect(parsed.invalid.map((i) => i.index)).toEqual([1, 2]);
    // The event time, when usable, is kept (ISO 8601 to the millisecond, so times compare as text).
    const timed = (eventTime: unknown) =>
      parseS3Event({ Records: [{ ...good('uploads/t.zip'), eventTime }] }).records[0]!.eventTime;
    expect(timed('2025-01-01T03:00:00.123Z')).toBe('2025-01-01T03:00:00.123Z');
    expect(timed('2025-01-01T03:00:00Z')).toBe('2025-01-01T03:00:00.000Z');
    expect(timed('yesterday')).toBeUndefined();
    expect(timed(42)).toBeUndefined();
    expect(parseS3Event({}).invalid).toEqual([{ index: -1, reason: 'the event has no Records array' }]);
  });
});

describe('repository identity', () => {
  test('metadata wins, then the directory under the uploads prefix, then the file name', () => {
    expect(
      repositoryForUpload('uploads/org/repo/b.tgz', { repository: 'github.com/acme/x' }, 'uploads/'),
    ).toEqual({
      repository: 'github.com/acme/x',
      source: 'metadata',
    });
    expect(repositoryForUpload('uploads/org/repo/b.tgz', {}, 'uploads/')).toEqual({
      repository: 'org/repo',
      source: 'directory',
    });
    expect(repositoryForUpload('uploads/org/repo/b.tgz', { repository: '../x' }, 'uploads/')).toEqual({
      repository: 'org/repo',
      source: 'directory',
    });
    expect(repositoryForUpload('uploads/network.tar.gz', {}, 'uploads/')).toEqual({
      repository: 'network',
      source: 'file-name',
    });
    expect(repositoryForUpload('in/x/y.zip', {}, 'in/')).toEqual({ repository: 'x', source: 'directory' });
  });
});
