#!/usr/bin/env node
// Entry point of `npx overlay-daemon`: runs the compiled CLI (built by `npm run build`, run on install).
import { main } from '../dist/daemon/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
