/**
 * vLLM's on/off environment switches that tsserve honours (`VLLM_SERVER_DEV_MODE`,
 * `VLLM_COMPUTE_NANS_IN_LOGITS`), read as vLLM reads them: `bool(int(value))`, so `0` is off
 * and any other whole number is on. vLLM's start fails on a value `int()` refuses (`true`,
 * `yes`, `on`); so does tsserve's, naming the variable, rather than guess and serve with the
 * switch silently off. Unset or empty is off.
 */

import { echoName } from './echo.js';

/** The switches, by name. */
export const VLLM_SWITCHES = ['VLLM_SERVER_DEV_MODE', 'VLLM_COMPUTE_NANS_IN_LOGITS'] as const;

export type VllmSwitch = (typeof VLLM_SWITCHES)[number];

/** What Python's `int()` takes of a decimal string: optional spaces, a sign, digits (underscores between them). */
const PY_INT = /^\s*[+-]?\d+(?:_\d+)*\s*$/;

/** The switch's state, or a problem naming the variable and the value (a bounded excerpt: echo.ts). */
export function vllmSwitch(name: VllmSwitch, env: NodeJS.ProcessEnv): { on: boolean } | { problem: string } {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return { on: false };
  if (!PY_INT.test(raw)) {
    return {
      problem: `${name}=${JSON.stringify(echoName(raw))} is not a whole number: vLLM reads it with int(), 0 for off, 1 (any other whole number) for on`,
    };
  }
  return { on: /[1-9]/.test(raw) };
}

/** The switch's state, off when its value is refused (start refuses such a value before anything reads it this way). */
export function vllmSwitchOn(name: VllmSwitch, env: NodeJS.ProcessEnv = process.env): boolean {
  const s = vllmSwitch(name, env);
  return 'on' in s && s.on;
}

/** Every refused switch value in `env`, one problem each. */
export function vllmSwitchProblems(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const name of VLLM_SWITCHES) {
    const s = vllmSwitch(name, env);
    if ('problem' in s) out.push(s.problem);
  }
  return out;
}
