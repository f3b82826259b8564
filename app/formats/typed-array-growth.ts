/** A typed array of at least `needed` elements holding `array`'s: its length doubled as often as needed. */
export function grow<A extends Uint16Array | Int32Array>(array: A, needed: number): A {
  let size = array.length * 2;
  while (size < needed) size *= 2;
  const bigger = new (array.constructor as new (n: number) => A)(size);
  bigger.set(array);
  return bigger;
}
