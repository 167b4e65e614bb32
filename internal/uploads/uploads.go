// Package uploads keeps the files people upload on the bus until the
// toolrunner reads them: the ingress has no database, and a file of up to
// 20 MiB is larger than one NATS message. A file is split into parts, each
// published to its own subject of the UPLOADS stream
// (purser.upload.<tenant>.<user>.<document>.<part>), and its manifest last
// (part "m"), so a manifest found means every part is stored. Readers get
// each part by its subject (direct get); nothing is consumed, and the
// stream's age limit is the retention of a file nobody imported.
//
// The subject names the owner, so a reader asks only for the files of the
// person a signed tool request names: one person's upload never reaches
// another's import.
package uploads

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
)

// PartSize is the largest part: under NATS's default 1 MiB payload, so
// a server with default settings carries uploads too.
const PartSize = 512 << 10

// ErrNotFound is returned for a file that was never stored, or is gone
// past the retention.
var ErrNotFound = errors.New("no such upload")

// Manifest describes a stored file.
type Manifest struct {
	Filename  string `json:"filename"`
	MediaType string `json:"media_type"`
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"`
	Parts     int    `json:"parts"`
}

// Store reads and writes uploads on one JetStream.
type Store struct {
	js jetstream.JetStream
}

// New returns a Store; the UPLOADS stream is provisioned with the others
// (bus.Provision).
func New(js jetstream.JetStream) *Store { return &Store{js: js} }

func subject(tenant, user, doc, part string) string {
	return "purser.upload." + tenant + "." + user + "." + doc + "." + part
}

// Put stores data as the document doc of tenant's user. Storing the same
// document again is harmless: every part and the manifest are the same
// bytes under the same subjects, and the publish ids make a retry within
// the duplicate window a no-op.
func (s *Store) Put(ctx context.Context, tenant, user, doc string, m Manifest, data []byte) error {
	sum := sha256.Sum256(data)
	m.SHA256, m.Size = hex.EncodeToString(sum[:]), int64(len(data))
	m.Parts = (len(data) + PartSize - 1) / PartSize
	for i := 0; i < m.Parts; i++ {
		end := min((i+1)*PartSize, len(data))
		if err := s.publish(ctx, subject(tenant, user, doc, strconv.Itoa(i)), data[i*PartSize:end], m.SHA256); err != nil {
			return fmt.Errorf("store upload part %d: %w", i, err)
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := s.publish(ctx, subject(tenant, user, doc, "m"), body, m.SHA256); err != nil {
		return fmt.Errorf("store upload manifest: %w", err)
	}
	return nil
}

func (s *Store) publish(ctx context.Context, subj string, data []byte, sum string) error {
	msg := nats.NewMsg(subj)
	msg.Data = data
	_, err := s.js.PublishMsg(ctx, msg, jetstream.WithMsgID(subj+"."+sum[:16]), jetstream.WithExpectStream(bus.StreamUploads))
	return err
}

// Get returns the document doc of tenant's user and its manifest, checked
// against the manifest's size and digest. At most max bytes are read.
func (s *Store) Get(ctx context.Context, tenant, user, doc string, max int64) (Manifest, []byte, error) {
	var m Manifest
	raw, err := s.part(ctx, subject(tenant, user, doc, "m"))
	if err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, nil, fmt.Errorf("upload manifest: %w", err)
	}
	if m.Size > max || m.Parts < 0 || int64(m.Parts) > m.Size/PartSize+1 {
		return m, nil, fmt.Errorf("upload of %d bytes in %d parts is over the limit of %d bytes", m.Size, m.Parts, max)
	}
	data := make([]byte, 0, m.Size)
	for i := 0; i < m.Parts; i++ {
		p, err := s.part(ctx, subject(tenant, user, doc, strconv.Itoa(i)))
		if err != nil {
			return m, nil, fmt.Errorf("upload part %d: %w", i, err)
		}
		data = append(data, p...)
	}
	sum := sha256.Sum256(data)
	if int64(len(data)) != m.Size || hex.EncodeToString(sum[:]) != m.SHA256 {
		return m, nil, fmt.Errorf("upload %s: its parts do not add up to what was stored", doc)
	}
	return m, data, nil
}

func (s *Store) part(ctx context.Context, subj string) ([]byte, error) {
	st, err := s.js.Stream(ctx, bus.StreamUploads)
	if err != nil {
		return nil, err
	}
	msg, err := st.GetLastMsgForSubject(ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return msg.Data, nil
}

// PutReading keeps what a reader made of the document (part "r"), so
// that what was read once (by OCR, say) is not read again, and what the
// person approves is what they were shown.
func (s *Store) PutReading(ctx context.Context, tenant, user, doc string, reading []byte) error {
	sum := sha256.Sum256(reading)
	return s.publish(ctx, subject(tenant, user, doc, "r"), reading, hex.EncodeToString(sum[:]))
}

// Reading is what PutReading kept, or ErrNotFound.
func (s *Store) Reading(ctx context.Context, tenant, user, doc string) ([]byte, error) {
	return s.part(ctx, subject(tenant, user, doc, "r"))
}
