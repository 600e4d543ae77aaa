/**
 * Values that cannot be read without a throw: what a tool, a hook or a model adapter may hand the
 * loop by mistake (a Proxy over a closed resource, a getter over a file that is gone).
 */

/** A Proxy whose every trap throws: reading a key, `in`, listing keys, `instanceof`. */
export function hostileProxy(): object {
  const refuse = (trap: string) => () => {
    throw new Error(`proxy refused ${trap}`);
  };
  return new Proxy({}, { get: refuse("get"), has: refuse("has"), ownKeys: refuse("ownKeys"), getPrototypeOf: refuse("getPrototypeOf"), getOwnPropertyDescriptor: refuse("getOwnPropertyDescriptor") });
}

/** A revoked Proxy: any operation on it throws a TypeError. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

/** An object whose `key` is an enumerable getter that throws `message`. */
export function throwingGetter(key: string, message: string): object {
  return Object.defineProperty({}, key, {
    get() {
      throw new Error(message);
    },
    enumerable: true,
  });
}
