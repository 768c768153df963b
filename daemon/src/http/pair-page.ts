// GET /pair: the phone's pairing page, the address the QR code carries (`https://<tunnel host>/pair#<code>`).
// One self-contained page: its style and script are inline and allowed by their hashes, nothing is loaded
// from anywhere, and the code read from the fragment leaves the phone only in the body of `POST /pair`.
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const STYLE = `*{box-sizing:border-box}
body{font:17px/1.5 system-ui,sans-serif;margin:0;padding:1.25rem;color:#1d232a;background:#f6f7f9;max-width:30rem;margin-inline:auto}
h1{font-size:1.4rem;margin:.5rem 0 1rem}
label{display:block;font-weight:600;margin:1rem 0 .3rem}
input{display:block;width:100%;min-height:44px;font:inherit;padding:.5rem .7rem;border:1px solid #aab2bb;border-radius:8px;background:#fff}
#code{font-family:ui-monospace,monospace;letter-spacing:.12em;text-transform:uppercase}
button,a.button{display:block;width:100%;min-height:44px;margin-top:1.25rem;font:inherit;font-weight:600;padding:.6rem;border:0;border-radius:8px;background:#0b63c5;color:#fff;text-align:center;text-decoration:none}
button:disabled{background:#8aa9cc}
#status{margin-top:1.25rem;padding:.75rem;border-radius:8px;background:#fff;border:1px solid #d5d9de}
#status:empty{display:none}
#status.bad{border-color:#c0392b;color:#8e2418;background:#fdf0ee}
#status.good{border-color:#1e8449;color:#145a32;background:#eefaf2}
.muted{color:#5b6570;font-size:.95rem}
[hidden]{display:none!important}`;

// The browser half. Plain ES2017, no modules: it runs as the page's only script.
const SCRIPT = `(function () {
  var form = document.getElementById('pair');
  var codeInput = document.getElementById('code');
  var nameInput = document.getElementById('name');
  var button = document.getElementById('send');
  var status = document.getElementById('status');
  var open = document.getElementById('open');

  function say(text, kind) {
    status.textContent = text;
    status.className = kind || '';
  }

  // The code rides in the fragment, which the browser never sends; take it and drop it from the address.
  var fromHash = decodeURIComponent(location.hash.replace(/^#/, ''));
  if (fromHash) {
    codeInput.value = fromHash.toUpperCase();
    history.replaceState(null, '', location.pathname);
  }

  function guessName(ua) {
    if (/iPhone/.test(ua)) return 'iPhone';
    if (/iPad/.test(ua)) return 'iPad';
    if (/Android/.test(ua)) return /Mobile/.test(ua) ? 'Android phone' : 'Android tablet';
    if (/Macintosh/.test(ua)) return 'Mac';
    if (/Windows/.test(ua)) return 'Windows PC';
    if (/CrOS/.test(ua)) return 'Chromebook';
    if (/Linux/.test(ua)) return 'Linux computer';
    return 'Phone';
  }
  nameInput.value = guessName(navigator.userAgent);

  function busy(on) {
    button.disabled = on;
    codeInput.disabled = on;
    nameInput.disabled = on;
  }

  function poll(pairingId) {
    fetch('/pair/' + encodeURIComponent(pairingId), { cache: 'no-store', credentials: 'same-origin' })
      .then(function (res) {
        if (res.status === 404) {
          say('This pairing is no longer known: ask the streamer for a new code.', 'bad');
          busy(false);
          return;
        }
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.json().then(function (answer) {
          if (answer.state === 'approved') {
            say('Approved — opening the dashboard', 'good');
            open.hidden = false;
            open.focus();
            // The cookie came with this answer: the dashboard opens as this device, a moment after the
            // words can be read (the link is there should the browser not follow).
            setTimeout(function () {
              location.assign('/dashboard');
            }, 1000);
          } else if (answer.state === 'refused') {
            say('Refused: the streamer did not approve this device.', 'bad');
            busy(false);
          } else if (answer.state === 'expired') {
            say('Expired — ask for a new code', 'bad');
            busy(false);
          } else {
            setTimeout(poll, 2000, pairingId);
          }
        });
      })
      .catch(function () {
        // The network on a phone comes and goes: keep asking.
        setTimeout(poll, 2000, pairingId);
      });
  }

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var code = codeInput.value.replace(/[\\s-]/g, '').toUpperCase();
    var deviceName = nameInput.value.trim();
    if (!/^[A-Z2-7]{10}$/.test(code)) {
      say('The code is 10 letters and digits (A–Z, 2–7), as shown on the streamer\\'s computer.', 'bad');
      return;
    }
    if (!deviceName) {
      say('Give this device a name, so the streamer knows what they approve.', 'bad');
      return;
    }
    busy(true);
    say('Sending…');
    fetch('/pair', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: code, deviceName: deviceName }),
      cache: 'no-store',
      credentials: 'same-origin',
    })
      .then(function (res) {
        if (res.status === 202) {
          return res.json().then(function (body) {
            say('Waiting for the streamer to approve on their computer…');
            setTimeout(poll, 2000, body.pairingId);
          });
        }
        busy(false);
        if (res.status === 403) {
          say('This code is wrong, already used or expired: check it, or ask the streamer for a new one.', 'bad');
        } else if (res.status === 429) {
          var wait = Number(res.headers.get('Retry-After'));
          say(
            'Too many tries: wait ' +
              (wait > 0 ? (wait >= 120 ? Math.ceil(wait / 60) + ' minutes' : wait + ' seconds') : 'a while') +
              ' before trying again.',
            'bad',
          );
        } else {
          say('The streamer\\'s computer answered ' + res.status + ': try again.', 'bad');
        }
      })
      .catch(function () {
        busy(false);
        say('The streamer\\'s computer could not be reached: check the connection and try again.', 'bad');
      });
  });
})();`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Only the inline style and script above (by hash), calls to its own origin, never framed. */
export const PAIR_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Pair this device</title><style>${STYLE}</style></head><body>
<h1>Pair this device</h1>
<p class="muted">The streamer approves this device on their computer. Once approved, it opens their dashboard.</p>
<form id="pair" novalidate>
<label for="code">Pairing code</label>
<input id="code" name="code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" required>
<label for="name">Name of this device</label>
<input id="name" name="name" autocomplete="off" maxlength="64" required>
<button id="send" type="submit">Pair</button>
</form>
<p id="status" role="status" aria-live="polite"></p>
<a id="open" class="button" href="/dashboard" hidden>Open the dashboard</a>
<script>${SCRIPT}</script>
</body></html>
`;

/** GET /pair (and HEAD): the page, the same for a local client and through the tunnel. */
export function pairPageHandler(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(HTML),
    'Cache-Control': 'no-store',
    'Content-Security-Policy': PAIR_PAGE_CSP,
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
  res.end(req.method === 'HEAD' ? undefined : HTML);
}
