// Entry of the dashboard bundle: signs in with the admin key of the sign-in URL or, without one, as the paired
// device this browser is (decisions-3 §11), and renders the app. A sign-in link pasted into a tab already on
// /dashboard changes only the fragment: that signs in too.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { DeviceSession } from '../../../shared/protocol/devices.js';
import { App, SignedOut } from './app.js';
import { lookUpDeviceSession, takeKeyFromLocation } from './session.js';

/** Who the page speaks for, once known. */
type Signed =
  | { kind: 'looking' }
  | { kind: 'admin'; key: string }
  | { kind: 'device'; session: DeviceSession }
  | { kind: 'signed-out' }
  | { kind: 'none' };

const fromKey = (key: string | undefined): Signed => (key ? { kind: 'admin', key } : { kind: 'looking' });

function Root() {
  const [signed, setSigned] = useState<Signed>(() => fromKey(takeKeyFromLocation()));
  useEffect(() => {
    const onHashChange = () => {
      const key = takeKeyFromLocation();
      if (key) setSigned({ kind: 'admin', key });
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);
  // Without the admin key, this browser may be a paired device: its cookie says so.
  useEffect(() => {
    if (signed.kind !== 'looking') return;
    let current = true;
    void lookUpDeviceSession().then((found) => {
      if (current) setSigned((now) => (now.kind === 'looking' ? found : now));
    });
    return () => {
      current = false;
    };
  }, [signed.kind]);

  if (signed.kind === 'looking') return null;
  // Revoked: the app (and every view's polling) is gone; only the way back is shown.
  if (signed.kind === 'signed-out') return <SignedOut />;
  if (signed.kind === 'device') {
    return (
      <App
        key={`device:${signed.session.deviceId}`}
        credential={signed.session}
        onSignedOut={() => setSigned({ kind: 'signed-out' })}
      />
    );
  }
  // A new key starts the app afresh: no refusal or data of the previous key stays on screen.
  const key = signed.kind === 'admin' ? signed.key : undefined;
  return <App key={key ?? ''} credential={key} />;
}

const root = document.getElementById('app');
if (root) render(<Root />, root);
