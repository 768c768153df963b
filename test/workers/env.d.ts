// Brings the Worker's Env and main-module types into the Workers test project.
import type {} from '../../workers/src/env.js';
