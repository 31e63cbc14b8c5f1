/**
 * Reading a file of a model directory as a request is read: a regular file inside the model store
 * after resolving links, size-bounded before it is read, read off the event loop (libuv's pool),
 * never echoed back. Both sides use it: the frontend for model-config.yaml and the files it
 * inspects, a worker for the tokenizer and config files it loads.
 */
import { constants, promises as fsp } from 'node:fs';
import * as path from 'node:path';

/** Why a model file could not be read. */
export type ModelFileProblem = 'missing' | 'outside_store' | 'not_regular' | 'too_large' | 'unreadable';

/** A model file that was refused, with its reason; the message never holds the file's content. */
export class ModelFileError extends Error {
  constructor(
    readonly file: string,
    readonly problem: ModelFileProblem,
    message: string,
  ) {
    super(message);
    this.name = 'ModelFileError';
  }
}

/** Default bound for a small text file of a model directory (configs, templates, labels). */
export const DEFAULT_MODEL_TEXT_BYTES = 8 * 1024 * 1024;

/** Bound for a tokenizer.json (a 250k-token vocabulary with merges is ~20 MB). */
export const DEFAULT_TOKENIZER_BYTES = 64 * 1024 * 1024;

/**
 * The resolved path of `file` when it is a regular file inside `store` (both resolved through
 * links), else a ModelFileError. `file` may be absolute or relative to `store`.
 */
export async function resolveModelFile(store: string, file: string): Promise<string> {
  const shown = path.relative(store, path.resolve(store, file)) || file;
  let realStore: string;
  let real: string;
  try {
    realStore = await fsp.realpath(store);
    real = await fsp.realpath(path.resolve(store, file));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new ModelFileError(shown, 'missing', `${shown}: no such file`);
    throw new ModelFileError(shown, 'unreadable', `${shown}: cannot be resolved (${code ?? 'error'})`);
  }
  if (real !== realStore && !real.startsWith(realStore + path.sep)) {
    throw new ModelFileError(shown, 'outside_store', `${shown}: resolves outside the model store`);
  }
  return real;
}

/** A model file opened for reading: its handle (the caller closes it), its size, and its name as shown. */
export interface OpenModelFile {
  readonly handle: fsp.FileHandle;
  readonly size: number;
  readonly shown: string;
}

/**
 * Opens a regular file inside `store`. A FIFO, device, socket or directory is refused without
 * blocking: opened O_NONBLOCK (an open of a FIFO with no writer would wait), checked with fstat
 * before any read. For a reader that walks a file by position (ONNX headers) without reading it whole.
 */
export async function openModelFile(store: string, file: string): Promise<OpenModelFile> {
  const real = await resolveModelFile(store, file);
  const shown = path.relative(store, path.resolve(store, file)) || file;
  let handle: fsp.FileHandle;
  try {
    handle = await fsp.open(real, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ModelFileError(shown, 'unreadable', `${shown}: cannot be opened (${code ?? 'error'})`);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new ModelFileError(shown, 'not_regular', `${shown}: not a regular file`);
    return { handle, size: st.size, shown };
  } catch (err) {
    await handle.close().catch(() => undefined);
    if (err instanceof ModelFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ModelFileError(shown, 'unreadable', `${shown}: cannot be read (${code ?? 'error'})`);
  }
}

/**
 * The bytes of a regular file inside `store` (see openModelFile), at most `maxBytes` of them: a
 * file over the bound is refused before it is read, and one that grows past it while read is
 * refused too.
 */
export async function readModelFile(store: string, file: string, maxBytes: number): Promise<Buffer> {
  const { handle, size, shown } = await openModelFile(store, file);
  try {
    if (size > maxBytes) {
      throw new ModelFileError(shown, 'too_large', `${shown}: ${size} bytes, over the bound of ${maxBytes}`);
    }
    // One byte more than the size fstat gave, to see a file that grew since.
    let buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, size + 1));
    let filled = 0;
    for (;;) {
      if (filled === buf.length) {
        if (buf.length > maxBytes) {
          throw new ModelFileError(shown, 'too_large', `${shown}: grew past the bound of ${maxBytes} bytes while read`);
        }
        // It grew, still within the bound: read on into a larger buffer.
        const larger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buf.length * 2));
        buf.copy(larger, 0, 0, filled);
        buf = larger;
      }
      const { bytesRead } = await handle.read(buf, filled, buf.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return buf.subarray(0, filled);
  } catch (err) {
    if (err instanceof ModelFileError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ModelFileError(shown, 'unreadable', `${shown}: cannot be read (${code ?? 'error'})`);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** readModelFile as UTF-8 text. */
export async function readModelText(store: string, file: string, maxBytes = DEFAULT_MODEL_TEXT_BYTES): Promise<string> {
  return (await readModelFile(store, file, maxBytes)).toString('utf8');
}

/**
 * A short, escaped excerpt of untrusted text for an error message: at most `max` characters
 * (JSON-escaped, so no control character or newline reaches a log line), then `…(N more)`.
 */
export function excerpt(text: string, max = 80): string {
  const head = Array.from(text.slice(0, max * 2))
    .slice(0, max)
    .join('');
  const rest = text.length - head.length;
  const shown = JSON.stringify(head);
  return rest > 0 ? `${shown}…(${rest} more)` : shown;
}
