// The KV record of a user's tunnel, `tunnel:<user_id>` (decisions §2). It holds no secret: the
// connector token is fetched from Cloudflare again whenever the user asks for it.
import * as v from 'valibot';
import { parseJsonWith, Uuid } from '../../../shared/protocol/index.js';

export interface TunnelRecord {
  user_id: string;
  tunnel_id: string;
  tunnel_name: string;
  subdomain: string;
  hostname: string;
  dns_record_id: string;
  /** When Cloudflare created the tunnel (ISO 8601), so that concurrent writers store the same value. */
  created_at: string;
}

const TunnelRecordSchema: v.GenericSchema<TunnelRecord> = v.object({
  user_id: v.string(),
  tunnel_id: Uuid,
  tunnel_name: v.string(),
  subdomain: v.string(),
  hostname: v.string(),
  dns_record_id: v.string(),
  created_at: v.string(),
});

export const TUNNEL_KEY_PREFIX = 'tunnel:';
const keyOf = (userId: string) => `${TUNNEL_KEY_PREFIX}${userId}`;

export class TunnelStore {
  constructor(private readonly kv: KVNamespace) {}

  /** The stored record, or null when there is none or it does not parse (it is then rebuilt). */
  async get(userId: string): Promise<TunnelRecord | null> {
    const text = await this.kv.get(keyOf(userId));
    if (text === null) return null;
    const parsed = parseJsonWith(TunnelRecordSchema, text);
    if (!parsed.ok) {
      console.warn(`tunnel record of ${userId} is unreadable (${parsed.error}); treating it as missing`);
      return null;
    }
    return parsed.value;
  }

  async put(record: TunnelRecord): Promise<void> {
    await this.kv.put(keyOf(record.user_id), JSON.stringify(record));
  }

  async delete(userId: string): Promise<void> {
    await this.kv.delete(keyOf(userId));
  }
}
