import { InputError, type InputErrorCode } from '../../src/errors';

/** Await a rejection and check it is an `InputError` with `code` (and `entry`, when given). */
export async function expectInputError(
  promise: Promise<unknown>,
  code: InputErrorCode,
  entry?: string | RegExp,
): Promise<InputError> {
  let error: unknown;
  try {
    await promise;
  } catch (err) {
    error = err;
  }
  if (!(error instanceof InputError)) {
    throw new Error(
      `expected an InputError with code ${code}, got ${error === undefined ? 'success' : String(error)}`,
    );
  }
  expect({ code: error.code, message: error.message }).toEqual({ code, message: expect.any(String) });
  if (entry instanceof RegExp) expect(error.entry).toMatch(entry);
  else if (entry !== undefined) expect(error.entry).toBe(entry);
  return error;
}
