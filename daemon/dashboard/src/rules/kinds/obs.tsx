// An `obs` action's form: what OBS does, the names it needs (as named in OBS), and the undo after a time.
import { OBS_REQUESTS, type ObsRequest, type ObsRuleAction } from '../../../../../shared/rules.js';
import { RuleField } from '../rule-field.js';
import { type KindProps, OptionalNumber, TextInput, withKey } from './inputs.js';

/** The params of each OBS request, as the dashboard asks for them. */
const OBS_PARAMS: Record<ObsRequest, readonly { key: string; label: string; bool?: true }[]> = {
  SetCurrentProgramScene: [{ key: 'sceneName', label: 'Scene' }],
  SetSceneItemEnabled: [
    { key: 'sceneName', label: 'Scene' },
    { key: 'sourceName', label: 'Source' },
    { key: 'enabled', label: 'Show it (untick: hide it)', bool: true },
  ],
  SetInputMute: [
    { key: 'inputName', label: 'Audio input' },
    { key: 'inputMuted', label: 'Mute it (untick: unmute it)', bool: true },
  ],
  ToggleInputMute: [{ key: 'inputName', label: 'Audio input' }],
  SetSourceFilterEnabled: [
    { key: 'sourceName', label: 'Source' },
    { key: 'filterName', label: 'Filter' },
    { key: 'filterEnabled', label: 'Turn it on (untick: off)', bool: true },
  ],
  TriggerHotkeyByName: [{ key: 'hotkeyName', label: 'Hotkey name' }],
};
const OBS_LABELS: Record<ObsRequest, string> = {
  SetCurrentProgramScene: 'Switch to a scene',
  SetSceneItemEnabled: 'Show or hide a source in a scene',
  SetInputMute: 'Mute or unmute an audio input',
  ToggleInputMute: 'Toggle an audio input’s mute',
  SetSourceFilterEnabled: 'Turn a filter on or off',
  TriggerHotkeyByName: 'Press an OBS hotkey',
};

/** The params a request starts with: empty names, and "on" for the switches. */
export function startingObsParams(request: ObsRequest): Record<string, unknown> {
  return Object.fromEntries(OBS_PARAMS[request].map((p) => [p.key, p.bool ? true : '']));
}

export function ObsFields(props: KindProps<ObsRuleAction>) {
  const { fields, base, action, onChange } = props;
  const setParam = (key: string, value: unknown) =>
    onChange({ ...action, params: { ...action.params, [key]: value } });
  return (
    <>
      <RuleField fields={fields} sub={`${base}.request`} label="What OBS does">
        {(a11y) => (
          <select
            {...a11y}
            value={action.request}
            onChange={(e) => {
              const request = OBS_REQUESTS.find((r) => r === e.currentTarget.value);
              if (request) onChange({ ...action, request, params: startingObsParams(request) });
            }}
          >
            {OBS_REQUESTS.map((r) => (
              <option key={r} value={r}>
                {OBS_LABELS[r]}
              </option>
            ))}
          </select>
        )}
      </RuleField>
      {OBS_PARAMS[action.request].map((p) =>
        p.bool ? (
          <div key={p.key} class="field">
            <label class="check">
              <input
                type="checkbox"
                checked={action.params[p.key] === true}
                onChange={(e) => setParam(p.key, e.currentTarget.checked)}
              />
              {p.label}
            </label>
          </div>
        ) : (
          <TextInput
            key={p.key}
            fields={fields}
            sub={`${base}.params.${p.key}`}
            label={`${p.label} (as named in OBS)`}
            value={typeof action.params[p.key] === 'string' ? String(action.params[p.key]) : ''}
            set={(v) => setParam(p.key, v)}
          />
        ),
      )}
      {action.request !== 'TriggerHotkeyByName' && (
        <OptionalNumber
          fields={fields}
          sub={`${base}.revertAfterMs`}
          label="Undo after (ms): back to the scene or state before"
          placeholder="never"
          value={action.revertAfterMs}
          set={(ms) => onChange(withKey(action, 'revertAfterMs', ms))}
          min={1}
          max={600000}
          step={500}
        />
      )}
    </>
  );
}
