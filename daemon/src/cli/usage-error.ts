// The one error a command throws for a wrong command line: printed with a pointer to --help, exit status 2.
export class UsageError extends Error {}
