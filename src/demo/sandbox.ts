import { realpath } from "node:fs/promises";
import path from "node:path";

/** Raised when a path leaves the sandbox or does not exist; its message is meant for the model. */
export class SandboxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * One folder the file tools may read, and nothing outside it.
 *
 * A path is checked twice: as written (so `../x` is refused before touching the disk) and
 * after resolving symlinks (so a link inside the folder that points outside is refused too).
 */
export class Sandbox {
  /** The folder as given, absolute. */
  readonly root: string;
  private realRoot: Promise<string> | undefined;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /**
   * The real absolute path of `requested` (relative to the root; an absolute path must lie
   * inside it).
   *
   * Contract: rejects with a `SandboxError` for paths outside the root (also through `..` or
   * symlinks) and for paths that do not exist.
   */
  async resolve(requested: string): Promise<string> {
    const root = await this.rootPath();
    const cleaned = requested.trim() === "" ? "." : requested.trim();
    const lexical = path.resolve(this.root, cleaned);
    if (!isInside(this.root, lexical)) throw this.outside(requested);
    let real: string;
    try {
      real = await realpath(lexical);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new SandboxError(`"${requested}" does not exist in ${this.root}.`);
      throw new SandboxError(`"${requested}" cannot be opened: ${(error as Error).message}`);
    }
    if (!isInside(root, real)) throw this.outside(requested);
    return real;
  }

  /**
   * The absolute path where a new file named `requested` may be created: its folder must exist
   * inside the root (symlinks resolved), the name itself is not checked for existence.
   *
   * Contract: rejects with a `SandboxError` as `resolve` does for the folder, and for a path that
   * names the root or ends in a separator.
   */
  async resolveNew(requested: string): Promise<string> {
    const cleaned = requested.trim();
    const name = path.basename(cleaned);
    if (cleaned === "" || /[\\/]$/.test(cleaned) || name === "." || name === "..") {
      throw new SandboxError(`"${requested}" is not a file name; give a path such as "notes.txt".`);
    }
    return path.join(await this.resolve(path.dirname(cleaned)), name);
  }

  /** `absolute` as a path relative to the root, `.` for the root itself (for display). */
  relative(absolute: string): string {
    return path.relative(this.root, absolute) || ".";
  }

  private rootPath(): Promise<string> {
    // Resolved once: a root that is itself a symlink (macOS /tmp) must compare by its target.
    this.realRoot ??= realpath(this.root).catch(() => {
      throw new SandboxError(`The sandbox folder ${this.root} does not exist.`);
    });
    return this.realRoot;
  }

  private outside(requested: string): SandboxError {
    return new SandboxError(`"${requested}" is outside the sandbox folder ${this.root}; only files inside it can be read.`);
  }
}

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}
