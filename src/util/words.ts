/**
 * Counted nouns for messages people read: `count(1, 'notice')` is "1 notice", `count(2, 'notice')`
 * "2 notices" (never "1 notices" or "finding(s)"). A leaf: imports nothing.
 */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
