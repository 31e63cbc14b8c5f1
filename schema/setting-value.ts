/**
 * How an engine setting's value reads in a message, shared by the engine-block validator
 * (engine-args.ts) and the speculative_config check (speculative-config.ts).
 */
import { showValue } from './config/doc.js';

/** showValue's reading, but a list spelled out as JSON (`[257,10]`, not `a list`): id lists are settings. */
export function showSetting(v: unknown): string {
  return Array.isArray(v) ? JSON.stringify(v) : showValue(v);
}
