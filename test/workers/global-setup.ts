// Starts the local fakes of Patreon, the Cloudflare API and Kick (on loopback) for the Workers project.
import type { TestProject } from 'vitest/node';
import { startFakeCloudflare } from '../support/fakes/cloudflare-api.js';
import { startFakeKickApi } from '../support/fakes/kick-api.js';
import { startFakePatreon } from '../support/fakes/patreon.js';

export default async function setup(project: TestProject) {
  const [patreon, cloudflare, kick] = await Promise.all([
    startFakePatreon(),
    startFakeCloudflare(),
    startFakeKickApi(),
  ]);
  project.provide('patreonBase', patreon.url);
  project.provide('cloudflareBase', cloudflare.url);
  project.provide('kickBase', kick.url);
  return async () => {
    await Promise.all([patreon.close(), cloudflare.close(), kick.close()]);
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    patreonBase: string;
    cloudflareBase: string;
    kickBase: string;
  }
}
