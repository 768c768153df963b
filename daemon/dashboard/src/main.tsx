// Entry of the dashboard bundle: reads the admin key from the sign-in URL and renders the app.
import { render } from 'preact';
import { App } from './app.js';
import { takeKeyFromLocation } from './session.js';

const root = document.getElementById('app');
if (root) render(<App adminKey={takeKeyFromLocation()} />, root);
