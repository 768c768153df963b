// Brings the Worker's Env and main-module types, and the fakes' URLs from global-setup.ts, into the Workers test project.
import type {} from '../../workers/src/env.js';

declare module 'vitest' {
  export interface ProvidedContext {
    patreonBase: string;
    cloudflareBase: string;
    kickBase: string;
  }
}
