/**
 * Hooks that may take a `/v1/chat/completions` request before the text path does (a pipeline's
 * spoken answers, frontend/openai/audio.ts). A hook answers true when it took the request.
 */
import type { Request, Response } from 'express';

/** Takes the request (and answers it) or returns false. `arrivalMs` is the frontend's performance.now() at arrival. */
export type ChatHook = (req: Request, res: Response, arrivalMs: number) => boolean;

const HOOKS: ChatHook[] = [];

/** Registers a hook (call before the server starts). */
export function registerChatHook(hook: ChatHook): void {
  HOOKS.push(hook);
}

/** Offers the request to every hook in order; true once one took it. */
export function chatHookTook(req: Request, res: Response, arrivalMs: number): boolean {
  for (const h of HOOKS) if (h(req, res, arrivalMs)) return true;
  return false;
}
