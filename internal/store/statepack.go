package store

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// A conversation's state is stored compressed on SQLite. Its JSON (about
// 1.6 KB in the bench, more with long answers) passed what a page of
// 1 KiB keeps of a row, so every event rewrote the row's leaf and an
// overflow page, freeing one page and taking another, which wrote the
// file's first page and a freelist page too. Compressed it is under half
// that size. Postgres keeps the text: its column is TEXT, which cannot
// hold these bytes, and it compresses large values itself.
//
// A row stored before holds the JSON text and is read as it is; a
// compressed row is a blob that begins with zstd's magic number, which no
// JSON text does.

// zstdMagic opens every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// packStateMin is the size under which a state is stored as it is: it
// fits in a page with room to spare, and compressing it saves no page.
const packStateMin = 512

// stateMaxUnpacked bounds what a stored state may unpack to.
const stateMaxUnpacked = 16 << 20

var (
	stateEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true))
	stateDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(stateMaxUnpacked),
		zstd.WithDecoderLowmem(true), zstd.WithDecoderConcurrency(0))
)

// stateArg is the query argument that stores a conversation's state: NULL
// when empty; on SQLite, compressed when that saves room.
func (s *Store) stateArg(state json.RawMessage) any {
	if s.d.name != dialectSQLite || len(state) < packStateMin {
		return jsonArg(state)
	}
	return stateEncoder.EncodeAll(state, make([]byte, 0, len(state)/2))
}

// stateCol scans a stored state: JSON text as it is, a compressed one
// unpacked.
type stateCol struct{ m *json.RawMessage }

func (c stateCol) Scan(v any) error {
	b, ok := v.([]byte)
	if !ok || !bytes.HasPrefix(b, zstdMagic) {
		return jsonCol(c).Scan(v)
	}
	out, err := stateDecoder.DecodeAll(b, nil)
	if err != nil {
		return fmt.Errorf("scan state: %w", err)
	}
	*c.m = out
	return nil
}
