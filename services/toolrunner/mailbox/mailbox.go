// Package mailbox reads mail for the statement flow: a local folder of
// .eml files (the default of "purser up", with a demo mailbox) and the
// Gmail API. Both are read-only: nothing here can send, forward or delete.
package mailbox

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// MaxAttachment is the largest attachment read.
const MaxAttachment = 10 << 20

// maxMessage bounds one .eml file.
const maxMessage = 25 << 20

// Local is a mailbox folder: <dir>/<tenant>/<user>/*.eml is that user's mail.
type Local struct{ Dir string }

var _ toolrunner.Mail = Local{}

// message is one parsed e-mail.
type message struct {
	ID          string
	From        string
	Subject     string
	Date        time.Time
	Body        string
	Attachments []toolrunner.File
}

func (l Local) userDir(tenant, user string) (string, error) {
	if !contracts.ValidID(tenant) || !contracts.ValidID(user) {
		return "", errors.New("mailbox: bad tenant or user id")
	}
	return filepath.Join(l.Dir, tenant, user), nil
}

// messageID names a file stably without revealing its path.
func messageID(file string) string {
	h := sha256.Sum256([]byte(filepath.Base(file)))
	return "m-" + hex.EncodeToString(h[:])[:20]
}

func (l Local) messages(tenant, user string) ([]message, error) {
	dir, err := l.userDir(tenant, user)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil {
		return nil, err
	}
	var out []message
	for _, f := range files {
		m, err := readFile(f)
		if err != nil {
			continue // an unreadable file is not mail
		}
		out = append(out, m)
	}
	return out, nil
}

func readFile(path string) (message, error) {
	f, err := os.Open(path)
	if err != nil {
		return message{}, err
	}
	defer f.Close()
	m, err := parse(io.LimitReader(f, maxMessage))
	if err != nil {
		return message{}, err
	}
	m.ID = messageID(path)
	return m, nil
}

var words = new(mime.WordDecoder)

func decodeHeader(s string) string {
	if d, err := words.DecodeHeader(s); err == nil {
		return d
	}
	return s
}

// parse reads one RFC 5322 message with its MIME parts.
func parse(r io.Reader) (message, error) {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return message{}, fmt.Errorf("mailbox: %w", err)
	}
	m := message{From: decodeHeader(msg.Header.Get("From")), Subject: decodeHeader(msg.Header.Get("Subject"))}
	if d, err := msg.Header.Date(); err == nil {
		m.Date = d.UTC()
	}
	if err := m.walk(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Header.Get("Content-Disposition"), msg.Body, 0); err != nil {
		return message{}, err
	}
	return m, nil
}

func (m *message) walk(ctype, encoding, disposition string, body io.Reader, depth int) error {
	if depth > 8 {
		return errors.New("mailbox: parts nested too deep")
	}
	mt, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		mt, params = "text/plain", nil
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return fmt.Errorf("mailbox: %w", err)
			}
			if err := m.walk(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p.Header.Get("Content-Disposition"), p, depth+1); err != nil {
				return err
			}
		}
	}
	data, err := io.ReadAll(io.LimitReader(decoder(encoding, body), MaxAttachment+1))
	if err != nil {
		return fmt.Errorf("mailbox: %w", err)
	}
	name := ""
	if _, dp, err := mime.ParseMediaType(disposition); err == nil {
		name = dp["filename"]
	}
	if name == "" {
		name = params["name"]
	}
	if name != "" || strings.HasPrefix(strings.ToLower(disposition), "attachment") {
		if name == "" {
			name = "attachment"
		}
		if len(data) > MaxAttachment {
			return fmt.Errorf("mailbox: attachment %q is larger than %d MiB", decodeHeader(name), MaxAttachment>>20)
		}
		m.Attachments = append(m.Attachments, toolrunner.File{Name: filepath.Base(decodeHeader(name)), MediaType: mt, Data: data})
		return nil
	}
	if mt == "text/plain" && m.Body == "" {
		m.Body = string(data)
	}
	return nil
}

func decoder(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, &stripSpace{r: r})
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	}
	return r
}

// stripSpace drops the line breaks base64 bodies carry.
type stripSpace struct{ r io.Reader }

func (s *stripSpace) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	out := p[:0]
	for _, c := range p[:n] {
		if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
			out = append(out, c)
		}
	}
	return len(out), err
}

// Search ranks the user's mail for query.
func (l Local) Search(_ context.Context, tenant, user, query string, days, limit int, now time.Time) ([]contracts.MailSummary, error) {
	msgs, err := l.messages(tenant, user)
	if err != nil {
		return nil, err
	}
	cands := make([]Candidate, 0, len(msgs))
	for _, m := range msgs {
		var names []string
		for _, a := range m.Attachments {
			names = append(names, a.Name)
		}
		cands = append(cands, Candidate{ID: m.ID, From: m.From, Subject: m.Subject, Date: m.Date, Attachments: names})
	}
	return Rank(query, cands, days, limit, now), nil
}

// Fetch returns a message's subject and attachments.
func (l Local) Fetch(_ context.Context, tenant, user, id string) (toolrunner.Fetched, error) {
	msgs, err := l.messages(tenant, user)
	if err != nil {
		return toolrunner.Fetched{}, err
	}
	for _, m := range msgs {
		if m.ID == id {
			return toolrunner.Fetched{From: m.From, Subject: m.Subject, Files: m.Attachments}, nil
		}
	}
	return toolrunner.Fetched{}, toolrunner.ErrNoMessage
}
