// `npm run dev:kick-webhook -- <kind>`: asks a running `npm run dev:stack` to sign a sample Kick webhook of that
// kind (chat, follow, sub, renewal, gifts, kicks, live, offline, unmapped) for its Kick channel and deliver it to
// the Gatekeeper's /kick/webhook, as Kick would; prints the Gatekeeper's answer.
const USAGE = `Usage: npm run dev:kick-webhook -- [kind]

Signs a sample Kick webhook for the Kick channel of a running "npm run dev:stack" and delivers it to
the stack's Gatekeeper (POST /kick/webhook), as Kick would, then prints the Gatekeeper's answer.

Kinds (default: chat):
  chat       a chat message (chat.message.sent)
  follow     a follow (channel.followed)
  sub        a new subscription (channel.subscription.new)
  renewal    a renewed subscription (channel.subscription.renewal)
  gifts      gifted subscriptions (channel.subscription.gifts)
  kicks      Kicks gifted (kicks.gifted)
  live       the stream going live (livestream.status.updated)
  offline    the stream ending (livestream.status.updated)
  unmapped   an event type the Gatekeeper does not map (answered 200, nothing kept)

DEV_STACK_KICK_WEBHOOK_PORT names the stack's port for this (default 8798).
`;

const port = Number(process.env.DEV_STACK_KICK_WEBHOOK_PORT || 8798);
const arg = process.argv[2];
if (arg === '--help' || arg === '-h' || arg === 'help') {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (arg?.startsWith('-')) {
  process.stderr.write(`dev:kick-webhook: unknown option ${arg}\n\n${USAGE}`);
  process.exit(2);
}
const kind = arg ?? 'chat';

/** What the stack said when it refused: its `error` in words, else the text as it came (cut). */
function refusal(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {}
  return text.slice(0, 300);
}

try {
  const res = await fetch(`http://127.0.0.1:${port}/${encodeURIComponent(kind)}`, { method: 'POST' });
  const text = await res.text();
  if (res.status !== 200) {
    process.stderr.write(`dev:kick-webhook: the stack did not send "${kind}": ${refusal(text)}\n\n${USAGE}`);
    process.exit(1);
  }
  const { type, status, answer } = JSON.parse(text) as { type: string; status: number; answer: string };
  console.log(`${type}: the Gatekeeper answered ${status}${answer ? ` ${answer}` : ''}`);
  process.exit(status === 200 ? 0 : 1);
} catch (err) {
  console.error(
    `no dev:stack on 127.0.0.1:${port} (${(err as Error).message}): start "npm run dev:stack" first`,
  );
  process.exit(1);
}
