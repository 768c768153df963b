// `npm run dev:kick-webhook -- <kind>`: asks a running `npm run dev:stack` to sign a sample Kick webhook of that
// kind (chat, follow, sub, renewal, gifts, kicks, live, offline, unmapped) for its Kick channel and deliver it to
// the Gatekeeper's /kick/webhook, as Kick would; prints the Gatekeeper's answer.
const port = Number(process.env.DEV_STACK_KICK_WEBHOOK_PORT || 8798);
const kind = process.argv[2] ?? 'chat';
try {
  const res = await fetch(`http://127.0.0.1:${port}/${encodeURIComponent(kind)}`, { method: 'POST' });
  const text = await res.text();
  if (res.status !== 200) {
    console.error(text);
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
