/**
 * Type predicates of the IPC decoders (engine-ipc.ts and its sampling params check): what a
 * structured-clone message's fields are before they are trusted.
 */

/** A plain record (a message or a nested object of one). */
export type Obj = Record<string, unknown>;
/** An object that is neither null nor an array. */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A finite number. */
export const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** An integer. */
export const isInt = (v: unknown): v is number => Number.isInteger(v);
/** A list of token ids (integers >= 0). */
export const isTokenList = (v: unknown): boolean => Array.isArray(v) && v.every((t) => isInt(t) && (t as number) >= 0);
