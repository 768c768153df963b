// Entry of the dashboard bundle: reads the admin key from the sign-in URL and renders the app. A sign-in
// link pasted into a tab already on /dashboard changes only the fragment: that signs in too.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { App } from './app.js';
import { takeKeyFromLocation } from './session.js';

function Root() {
  const [adminKey, setAdminKey] = useState(() => takeKeyFromLocation());
  useEffect(() => {
    const onHashChange = () => setAdminKey(takeKeyFromLocation());
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);
  // A new key starts the app afresh: no refusal or data of the previous key stays on screen.
  return <App key={adminKey ?? ''} adminKey={adminKey} />;
}

const root = document.getElementById('app');
if (root) render(<Root />, root);
