// The overlay page OBS shows: reads the injected globals and renders the overlay's widgets.
import { readGlobals } from './globals.js';

const stage = document.getElementById('stage') as HTMLDivElement;
const globals = readGlobals();
stage.dataset.state = globals ? 'ready' : 'missing-globals';
if (globals) stage.dataset.overlayId = globals.overlayId;
