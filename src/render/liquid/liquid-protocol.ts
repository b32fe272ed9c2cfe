// Messages between LiquidRenderer (parent) and liquid-worker.ts (child process), sent over IPC
// with structured-clone ("advanced") serialization.

import type { JsonObject } from '../../domain/template.ts';
import type { LiquidLimits } from './liquid-engine.ts';
import type { TemplateDiagnostic } from '../../domain/template-diagnostics.ts';

export interface LiquidWorkerData {
  limits: LiquidLimits;
}

export interface LiquidRequest {
  id: number;
  body: string;
  css: string;
  partials: Record<string, string>;
  headerTemplate: string;
  footerTemplate: string;
  variables: JsonObject;
  /** liquidjs's soft time limit for this render (the hard one is terminate()). */
  renderLimitMs: number;
}

export type LiquidResponse =
  | { type: 'ready' }
  | { type: 'result'; id: number; html: string; headerTemplate: string; footerTemplate: string }
  /** reason 'time': liquidjs's own time limit fired (classified like the hard time-out). */
  | { type: 'error'; id: number; message: string; reason: 'time' | 'error'; diagnostic?: TemplateDiagnostic };
