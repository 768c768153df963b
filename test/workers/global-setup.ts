// Starts the local fakes of Patreon and the Cloudflare API (on loopback) for the Workers project.
import type { TestProject } from 'vitest/node';
import { startFakeCloudflare } from '../support/fakes/cloudflare-api.js';
import { startFakePatreon } from '../support/fakes/patreon.js';

export default async function setup(project: TestProject) {
  const [patreon, cloudflare] = await Promise.all([startFakePatreon(), startFakeCloudflare()]);
  project.provide('patreonBase', patreon.url);
  project.provide('cloudflareBase', cloudflare.url);
  return async () => {
    await Promise.all([patreon.close(), cloudflare.close()]);
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    patreonBase: string;
    cloudflareBase: string;
  }
}
