// The wire protocol of both servers, one file per topic: one schema per message and body, types derived
// from them. Sections cited as "interface §x" refer to docs/interface.md, "decisions §x" to docs/decisions.md.
export * from './commands.js';
export * from './control-api.js';
export * from './devices.js';
export * from './errors.js';
export * from './events.js';
export * from './gatekeeper.js';
export * from './kick-account.js';
export * from './messages.js';
export * from './parse.js';
export * from './primitives.js';
export * from './relay.js';
export * from './widget-packages.js';
export * from './widgets.js';
