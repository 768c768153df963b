// The speech engine's voices and a sample of one, for the Settings view.
import type { Polka } from 'polka';
import { type SpeechSample, SpeechSampleInput, type VoiceList } from '../../../shared/protocol/index.js';
import type { Speech } from '../actions/speech.js';
import { errorMessage } from '../errors.js';
import { readJson } from './body.js';
import { sendError, sendJson } from './responses.js';

export function mountSpeechRoutes(app: Polka, ctx: { speech: Speech }): void {
  // The speech engine's voices and a sample, for the Settings view.
  app.get('/api/tts/voices', async (_req, res) => {
    const engine = await ctx.speech.engine();
    sendJson(res, 200, {
      engine: engine?.name ?? null,
      voices: await ctx.speech.voices(),
    } satisfies VoiceList);
  });
  app.post('/api/tts/sample', async (req, res) => {
    const input = await readJson(req, res, SpeechSampleInput);
    if (!input) return;
    try {
      const hash = await ctx.speech.render(input.text, { voice: input.voice, rate: input.rate });
      sendJson(res, 200, { sound: `/tts/${hash}.wav` } satisfies SpeechSample);
    } catch (err) {
      sendError(res, 'unavailable', errorMessage(err));
    }
  });
}
