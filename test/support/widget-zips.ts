// Small widgets in the StreamElements style (jQuery, {{field}} placeholders, onEventReceived switching on
// `listener`), written for these tests, and the archives they travel in: each of the three shapes, and
// hostile ones (traversal, links, devices, bombs, too many entries).
import { type Zippable, zipSync } from 'fflate';

const enc = (text: string) => new TextEncoder().encode(text);

export const GIFT_BOARD = {
  html: '<div class="board"><h1 class="title">{{title}}</h1><ul id="gifts"></ul></div>',
  css: '.board { color: {{textColor}}; font-family: "{{font}}", sans-serif; }\n.title { font-size: {fontSize}px; }',
  js: [
    'let limit = 5;',
    "window.addEventListener('onWidgetLoad', (obj) => { limit = obj.detail.fieldData.limit; });",
    "window.addEventListener('onEventReceived', (obj) => {",
    '  const { listener, event } = obj.detail;',
    '  switch (listener) {',
    "    case 'gift-latest':",
    "      $('#gifts').prepend($('<li>').text(event.name + ' sent ' + event.amount + ' × ' + event.giftName));",
    "      $('#gifts li').slice(limit).remove();",
    '      break;',
    "    case 'follower-latest':",
    "      $('.title').text('Welcome ' + event.name);",
    '      break;',
    '  }',
    '});',
  ].join('\n'),
  fields: {
    title: { type: 'text', label: 'Title', value: 'Gifts tonight' },
    textColor: { type: 'colorpicker', label: 'Text colour', value: '#ffcc00' },
    font: { type: 'googleFont', label: 'Font', value: 'Lato' },
    fontSize: { type: 'slider', label: 'Size', value: 32, min: 10, max: 80, step: 1 },
    limit: { type: 'number', label: 'Rows', value: 5 },
    apiKey: { type: 'secret', label: 'Key of my own service', value: 'sk-field-default' },
    testGift: { type: 'button', label: 'Test a gift', value: 'gift' },
  },
  data: { title: 'Roses and lions', apiKey: 'sk-typed-by-the-streamer' },
};

type File = Uint8Array | [Uint8Array, { os?: number; attrs?: number }];

/** A zip of name → text (or bytes, with attributes), names written exactly as given. */
export function zipOf(files: Record<string, string | File>): Buffer {
  const zippable: Zippable = {};
  for (const [name, content] of Object.entries(files))
    zippable[name] = typeof content === 'string' ? enc(content) : content;
  return Buffer.from(zipSync(zippable, { level: 6 }));
}

/** Our own package, at the root or under `top/`. */
export function packageZip(top = '', extra: Record<string, string | File> = {}): Buffer {
  return zipOf({
    [`${top}manifest.json`]: JSON.stringify({
      formatVersion: 1,
      id: '00000000-0000-4000-8000-000000000000',
      name: 'Gift board',
      version: '2.1.0',
      author: 'Test author',
      compat: 'se',
    }),
    [`${top}widget.html`]: GIFT_BOARD.html,
    [`${top}widget.css`]: GIFT_BOARD.css,
    [`${top}widget.js`]: GIFT_BOARD.js,
    [`${top}fields.json`]: JSON.stringify(GIFT_BOARD.fields),
    [`${top}data.json`]: JSON.stringify(GIFT_BOARD.data),
    ...extra,
  });
}

/** A widget.io export: widget.ini and the five panes as .txt. */
export function widgetIoZip(top = '', overrides: Record<string, string | File> = {}): Buffer {
  return zipOf({
    [`${top}widget.ini`]: '[widget]\nname = Gift board from widget.io\n',
    [`${top}html.txt`]: GIFT_BOARD.html,
    [`${top}css.txt`]: GIFT_BOARD.css,
    [`${top}js.txt`]: GIFT_BOARD.js,
    [`${top}fields.txt`]: JSON.stringify(GIFT_BOARD.fields),
    [`${top}data.txt`]: '',
    ...overrides,
  });
}

/** The public collections' folder: widget.html, widget.css, widget.js, widget.json (the fields). */
export function folderZip(top = 'gift-board/', overrides: Record<string, string | File> = {}): Buffer {
  return zipOf({
    [`${top}widget.html`]: GIFT_BOARD.html,
    [`${top}widget.css`]: GIFT_BOARD.css,
    [`${top}widget.js`]: GIFT_BOARD.js,
    [`${top}widget.json`]: JSON.stringify(GIFT_BOARD.fields),
    ...overrides,
  });
}

/** Unix external attributes of a file of type `mode` (S_IFLNK, S_IFCHR…) as a Unix zipper writes them. */
export const unixEntry = (content: string, mode: number): File => [
  enc(content),
  { os: 3, attrs: mode << 16 },
];

/**
 * Rewrites the uncompressed size an entry declares (local header and central directory) without touching
 * its data: a bomb that claims to be small.
 */
export function lieAboutSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  const nameBytes = Buffer.from(name);
  for (let i = 0; i + 46 <= out.length; i++) {
    const sig = out.readUInt32LE(i);
    if (sig === 0x04034b50 && out.subarray(i + 30, i + 30 + nameBytes.length).equals(nameBytes))
      out.writeUInt32LE(size, i + 22);
    if (sig === 0x02014b50 && out.subarray(i + 46, i + 46 + nameBytes.length).equals(nameBytes))
      out.writeUInt32LE(size, i + 24);
  }
  return out;
}

export const zeros = (bytes: number) => new Uint8Array(bytes);
