import { tiersByBudget, WASM_TIERING_BUDGET } from '../../src/hcl/full/tier-up';

test.each([
  ['11.3.244.8-node.38', true], // Node 20
  ['12.4.254.21-node.33', true], // Node 22 (Lambda's runtime)
  ['13.6.233.10-node.28', true],
  ['14.1.146.11-node.14', true],
  ['10.2.154.26-node.29', false],
  ['15.0.1', false],
  ['', false],
  ['v8', false],
])('tiersByBudget(%p) is %p', (version, expected) => {
  expect(tiersByBudget(version)).toBe(expected);
});

test('the budget is the largest value of an int flag', () => {
  expect(WASM_TIERING_BUDGET).toBe(2 ** 31 - 1);
});
