import type { Signal } from '../types';
import { strong } from '../types';
import { parentDir } from '../paths';

/** A sample file of a scanner's query tests: `positive1.tf`, `negative.tf`, `positive2.tf.json`. */
const SAMPLE_FILE = /(^|\/)(positive|negative)[\w-]*\.(tf|tofu)(\.json)?$/;
/** A directory holding one sample of several files (KICS `test/positive1/main.tf`). */
const SAMPLE_DIR = /^(positive|negative)[\w-]*$/;

/**
 * A scanner's query test fixtures, as KICS lays them out
 * (https://github.com/Checkmarx/kics/blob/master/docs/creating-queries.md, "Test Folder"): each
 * query's `test/` directory holds `positive1.tf`, `positive2.tf`, `negative1.tf`… beside
 * `positive_expected_result.json`, or one sample per `positive1/` subdirectory. Each file is an
 * independent sample (several declare their own `terraform { required_providers }`), and the
 * directory is no module that anyone initialises: a `fragment`, reported once per fixture tree
 * (`configuration-not-checked`). Files must all be named like samples and an expected-results
 * file must sit beside them (or beside their sample directory): a `positive.tf` alone decides
 * nothing.
 */
export const scannerFixture: Signal = {
  id: 'scanner-fixture',
  decide({ module, path, segments }, { signals }) {
    const files = module.files;
    if (files.length === 0) return null;
    const beside = signals.expectedResults.get(path);
    if (beside !== undefined && files.every((f) => SAMPLE_FILE.test(f))) {
      return strong(
        'fragment',
        `scanner test samples: ${files.length === 1 ? 'its file is' : 'its files are'} named positive*/negative* beside ${beside} (each file is an independent sample, not a module)`,
      );
    }
    const last = segments[segments.length - 1];
    const parent = parentDir(path);
    const above = parent === undefined ? undefined : signals.expectedResults.get(parent);
    if (last !== undefined && SAMPLE_DIR.test(last) && (beside ?? above) !== undefined) {
      return strong(
        'fragment',
        `scanner test sample: the directory "${last}" beside ${(beside ?? above) as string} (a sample, not a module)`,
      );
    }
    return null;
  },
};
