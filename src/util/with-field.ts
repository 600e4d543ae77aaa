/**
 * A shallow copy of `source` with `key` set to `value`: what `{ ...source, [key]: value }` gives,
 * the key last when `source` lacks it.
 *
 * Why not the spread: on Node 20 (V8 11.3), once the code around it is optimized, a spread
 * followed by a key the source lacks gives every copy a hidden class of its own: about 1 µs a
 * copy against 40 ns (`{ ...event, partial }`, 10^6 copies), and every later read of such objects
 * megamorphic. A client decodes one such event per frame it receives. `Object.assign` into a
 * fresh object, then the key, keeps one hidden class (test/util/with-field.test.ts).
 */
export function withField<T extends object, K extends string, V>(source: T, key: K, value: V): T & Record<K, V> {
  // `Object.assign` would set the copy's prototype from an own "__proto__" key (JSON.parse makes
  // one from text a peer sent); the spread defines it as a key, as it must stay.
  if (Object.hasOwn(source, "__proto__")) return { ...source, [key]: value } as T & Record<K, V>;
  const copy = Object.assign({}, source) as T & Record<K, V>;
  (copy as Record<string, unknown>)[key] = value;
  return copy;
}

/**
 * `{ ...source, ...fields }` with one hidden class for every copy, as `withField` for several
 * keys. Why it matters beyond the copy's cost: a run's config is read at every step of the loop,
 * and a config with a hidden class of its own per run made each of those reads megamorphic
 * (`runConfig`: 7.3 µs a run with the spread, Node 20).
 */
export function withFields<T extends object, F extends object>(source: T, fields: F): Omit<T, keyof F> & F {
  if (Object.hasOwn(source, "__proto__")) return { ...source, ...fields };
  return Object.assign({}, source, fields);
}
