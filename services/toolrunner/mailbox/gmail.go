package mailbox

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/gmail/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// Tokens gives a source of a user's OAuth access tokens (scope
// gmail.readonly), refreshed as they expire; StoredTokens is one.
type Tokens interface {
	TokenSource(ctx context.Context, tenant, user string) (oauth2.TokenSource, error)
}

// Gmail reads a user's Gmail through the Gmail API, read-only.
type Gmail struct {
	Tokens Tokens
	// Endpoint overrides the API's base URL (tests point it at gmailtest).
	Endpoint string
	// HTTPClient is the base client under the OAuth transport.
	HTTPClient *http.Client
}

var _ toolrunner.Mail = Gmail{}

// Scope is the only scope purser asks for.
const Scope = gmail.GmailReadonlyScope

func (g Gmail) service(ctx context.Context, tenant, user string) (*gmail.Service, error) {
	src, err := g.Tokens.TokenSource(ctx, tenant, user)
	if err != nil {
		return nil, err
	}
	// A token that cannot be had (not connected, refresh refused) is a
	// clear error here, not a transport error inside the first API call.
	if _, err := src.Token(); err != nil {
		return nil, err
	}
	base := g.HTTPClient
	if base == nil {
		base = &http.Client{Timeout: 30 * time.Second}
	}
	client := oauth2.NewClient(context.WithValue(ctx, oauth2.HTTPClient, base), src)
	opts := []option.ClientOption{option.WithHTTPClient(client)}
	if g.Endpoint != "" {
		opts = append(opts, option.WithEndpoint(g.Endpoint))
	}
	return gmail.NewService(ctx, opts...)
}

// apiError turns Gmail API failures into errors without tokens or bodies.
func apiError(err error) error {
	var te *toolrunner.ToolError
	if errors.Is(err, ErrNoMailAccess) && errors.As(err, &te) {
		// The token expired during the call and could not be refreshed.
		return noAccess(te.Message)
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		switch ge.Code {
		case http.StatusUnauthorized, http.StatusForbidden:
			return noAccess(msgRefused)
		case http.StatusNotFound:
			return toolrunner.ErrNoMessage
		}
		return fmt.Errorf("gmail: HTTP %d", ge.Code)
	}
	return errors.New("gmail: unavailable")
}

// gmailQuery is the Gmail search for query within days.
func gmailQuery(query string, days int) string {
	var terms []string
	for _, w := range strings.Fields(strings.ToLower(query)) {
		w = strings.Trim(w, ".,!?'\"()")
		if w != "" && !stopWords[w] && w != "statement" && w != "statements" {
			terms = append(terms, w)
		}
	}
	q := fmt.Sprintf("has:attachment newer_than:%dd", days)
	if len(terms) > 0 {
		q += " {" + strings.Join(terms, " ") + " statement}"
	}
	return q
}

// Search lists matching messages and ranks them like the local mailbox.
func (g Gmail) Search(ctx context.Context, tenant, user, query string, days, limit int, now time.Time) ([]contracts.MailSummary, error) {
	srv, err := g.service(ctx, tenant, user)
	if err != nil {
		return nil, err
	}
	list, err := srv.Users.Messages.List("me").Q(gmailQuery(query, days)).MaxResults(25).Context(ctx).Do()
	if err != nil {
		return nil, apiError(err)
	}
	var cands []Candidate
	for _, ref := range list.Messages {
		m, err := srv.Users.Messages.Get("me", ref.Id).Format("full").Context(ctx).Do()
		if err != nil {
			return nil, apiError(err)
		}
		c := Candidate{ID: m.Id, Date: time.UnixMilli(m.InternalDate).UTC()}
		if m.Payload != nil {
			for _, h := range m.Payload.Headers {
				switch strings.ToLower(h.Name) {
				case "from":
					c.From = decodeHeader(h.Value)
				case "subject":
					c.Subject = decodeHeader(h.Value)
				}
			}
			walkParts(m.Payload, func(p *gmail.MessagePart) {
				if p.Filename != "" {
					c.Attachments = append(c.Attachments, filepath.Base(p.Filename))
				}
			})
		}
		if contracts.ValidID(c.ID) {
			cands = append(cands, c)
		}
	}
	return Rank(query, cands, days, limit, now), nil
}

func walkParts(p *gmail.MessagePart, fn func(*gmail.MessagePart)) {
	fn(p)
	for _, c := range p.Parts {
		walkParts(c, fn)
	}
}

// Fetch downloads a message's attachments.
func (g Gmail) Fetch(ctx context.Context, tenant, user, id string) (toolrunner.Fetched, error) {
	srv, err := g.service(ctx, tenant, user)
	if err != nil {
		return toolrunner.Fetched{}, err
	}
	m, err := srv.Users.Messages.Get("me", id).Format("full").Context(ctx).Do()
	if err != nil {
		return toolrunner.Fetched{}, apiError(err)
	}
	var out toolrunner.Fetched
	var fetchErr error
	if m.Payload != nil {
		for _, h := range m.Payload.Headers {
			if strings.EqualFold(h.Name, "subject") {
				out.Subject = decodeHeader(h.Value)
			}
			if strings.EqualFold(h.Name, "from") {
				out.From = decodeHeader(h.Value)
			}
		}
		walkParts(m.Payload, func(p *gmail.MessagePart) {
			if fetchErr != nil || p.Filename == "" || p.Body == nil {
				return
			}
			if p.Body.Size > MaxAttachment {
				fetchErr = fmt.Errorf("mailbox: attachment %q is larger than %d MiB", p.Filename, MaxAttachment>>20)
				return
			}
			data := p.Body.Data
			if p.Body.AttachmentId != "" {
				b, err := srv.Users.Messages.Attachments.Get("me", id, p.Body.AttachmentId).Context(ctx).Do()
				if err != nil {
					fetchErr = apiError(err)
					return
				}
				data = b.Data
			}
			raw, err := base64.URLEncoding.DecodeString(padBase64(data))
			if err != nil {
				fetchErr = fmt.Errorf("mailbox: attachment %q is not base64", p.Filename)
				return
			}
			out.Files = append(out.Files, toolrunner.File{Name: filepath.Base(p.Filename), MediaType: p.MimeType, Data: raw})
		})
	}
	return out, fetchErr
}

func padBase64(s string) string {
	s = strings.TrimRight(s, "=")
	if n := len(s) % 4; n != 0 {
		s += strings.Repeat("=", 4-n)
	}
	return s
}
