package store

// On SQLite a stored frame's payload is packed when it is long enough to
// gain: frames are a turn's largest rows (about 310 bytes of JSON each in
// the bench, two or three a turn), and a frame repeats its turn's id, its
// conversation and the names of its fields, which the dictionary holds.
// Packed it takes about half (49% of a bench run's frames). A payload is
// a client frame, JSON, so one stored before (or too short to pack) is
// told from a packed one by its first byte (pack.go); framePacker.col
// reads both. Postgres stores the payload as it is.

// packFrameMin is the length under which a payload is stored as it is.
const packFrameMin = 64

// framesDictID is the frames dictionary's id in each packed payload.
const framesDictID byte = 1

// framesDict is what packed payloads are matched against: client frames
// as the notifier stores them. It must never change, or payloads packed
// with it would not unpack.
const framesDict = `{"type":"user_message","conversation_id":"","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z","user_message":{"id":"","text":"what did I spend this month?"}}
{"type":"answer","conversation_id":"","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z","answer":{"turn_id":"t","content":"You spent £0.00 this month across 0 expenses.","citations":[{"call_id":"c","tool":"get_balance"}],"balance":{"range":"this_month","from":"2026-01-01","to":"2026-01-31","total":[{"minor":0,"currency":"GBP"}],"count":0}}}
{"type":"proposal","conversation_id":"","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z","proposal":{"proposal_id":"p","turn_id":"t","tool":"add_expense","args":{"item":"","amount":"0.00","currency":"GBP","date":"2026-01-01"},"summary":"Add expense '' £0.00 on 2026-01-01?","expires_at":"2026-01-01T00:00:00.000000000Z"}}
{"type":"clarify","conversation_id":"","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z","clarify":{"turn_id":"t","question":"How much was it?"}}
{"type":"error","conversation_id":"","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z","error":{"code":"","message":"","retry_after":0,"refused":false}}
{"type":"notification","at":"2026-01-01T00:00:00.000000000Z","notification":{"id":"","kind":"import","title":"","body":"","data":{},"created_at":"2026-01-01T00:00:00.000000000Z"}}
{"type":"tool_start","tool":{"call_id":"c","tool":"","status":"started"}}{"type":"tool_result","tool":{"call_id":"c","tool":"","status":"ok"}}
`

// framePacker packs payloads against framesDict.
var framePacker = newPacker(framesDictID, framesDict)

// framePayloadArg is the query argument that stores a frame's payload:
// on SQLite packed when that gains.
func (s *Store) framePayloadArg(payload []byte) []byte {
	if s.d.name != dialectSQLite || len(payload) < packFrameMin {
		return blobArg(payload)
	}
	return framePacker.pack(payload)
}
