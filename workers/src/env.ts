// The Gatekeeper's bindings and variables (decisions §2); `.dev.vars.example` documents each one.
export interface GatekeeperEnv {
  GATEKEEPER_KV: KVNamespace;
  PUBLIC_BASE_URL: string;
}

export type AppEnv = { Bindings: GatekeeperEnv };

// Types `env` and `exports` from "cloudflare:workers" for this Worker.
declare global {
  namespace Cloudflare {
    interface Env extends GatekeeperEnv {}
    interface GlobalProps {
      mainModule: typeof import('./index.js');
    }
  }
}
