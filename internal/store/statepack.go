package store

import "encoding/json"

// A conversation's state is stored packed on SQLite. Its JSON (about
// 1.6 KB in the bench, more with long answers) passed what a page of
// 1 KiB keeps of a row, so every event rewrote the row's leaf and an
// overflow page, freeing one page and taking another, which wrote the
// file's first page and a freelist page too. Packed against a dictionary
// of states it takes 38% of that (a bench run's states: 640 bytes on
// average, none over 900). Postgres keeps the text: its column is TEXT,
// which cannot hold these bytes, and it compresses large values itself.
//
// A row stored before holds the JSON text and is read as it is; a packed
// row is a blob that begins with a zero byte (pack.go), which no JSON text
// does; statePacker.col reads both.

// packStateMin is the size under which a state is stored as it is: it
// fits in a page with room to spare, and packing it saves no page.
const packStateMin = 512

// stateDictID is the state dictionary's id in each packed state.
const stateDictID byte = 1

// stateDict is what packed states are matched against: states as the
// orchestrator keeps them (services/orchestrator/state.go). It must never
// change, or states packed with it would not unpack.
const stateDict = `{"user_id":"","roles":["owner","member"],"timezone":"Europe/London","locale":"en-GB","history":[{"role":"user","text":"what did I spend this month?","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z"},{"role":"assistant","text":"You spent £0.00 this month across 0 expenses.","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z"},{"role":"user","text":"add coffee £3.50","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z"},{"role":"assistant","text":"Proposed: Add expense 'coffee' £3.50 on 2026-01-01?","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z","open":true},{"role":"user","text":"Yes: Add expense","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z"},{"role":"assistant","text":"Added expense #0: coffee, £3.50 on 2026-01-01 (other).","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z"},{"role":"tool","text":"","turn_id":"t","at":"2026-01-01T00:00:00.000000000Z"}],"earlier":true,"memory":{"entities.balance":{"range":"this_month","from":"2026-01-01","to":"2026-01-31","total":[{"minor":0,"currency":"GBP"}],"count":0},"entities.expense":{"id":0,"item":"coffee","amount":{"minor":0,"currency":"GBP"},"date":"2026-01-01","category":"other"},"ids.expense_id":0,"params.range":"this_month"},"turn":{"turn_id":"t","text":"","started_at":"2026-01-01T00:00:00.000000000Z","steps":[],"open":[{"call_id":"c","tool":"get_balance","args":{}}],"steps_used":0,"round":0,"plan":{"steps":[],"next":0}},"proposals":[{"id":"p","turn_id":"t","text":"","tool":"add_expense","args":{"item":"","amount":"0.00","currency":"GBP","date":"2026-01-01"},"summary":"Add expense","revision":0,"expires_at":"2026-01-01T00:00:00.000000000Z"}],"applied":["AAAAAAAAAAA","AAAAAAAAAAA"],"updated":"2026-01-01T00:00:00.000000000Z"}`

// statePacker packs states against stateDict.
var statePacker = newPacker(stateDictID, stateDict)

// stateArg is the query argument that stores a conversation's state: NULL
// when empty; on SQLite, packed when that saves room.
func (s *Store) stateArg(state json.RawMessage) any {
	if s.d.name != dialectSQLite || len(state) < packStateMin {
		return jsonArg(state)
	}
	return statePacker.pack(state)
}
