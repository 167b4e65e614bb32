package ingress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/uploads"
	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// UploadStore keeps an uploaded file until a tool reads it
// (internal/uploads on the bus).
type UploadStore interface {
	Put(ctx context.Context, tenant, user, doc string, m uploads.Manifest, data []byte) error
}

// WithUploads lets the ingress take files on POST /v1/uploads, kept in s.
// Without it the endpoint answers 503.
func (in *Ingress) WithUploads(s UploadStore) *Ingress {
	in.uploads = s
	return in
}

// uploadFields is how much the form's other fields may take beside the file.
const uploadFields = 64 << 10

// uploaded is what POST /v1/uploads adds to the chat answer.
type uploaded struct {
	DocumentID string `json:"document_id"`
	Kind       string `json:"kind"`
	Size       int64  `json:"size"`
}

// serveUpload is POST /v1/uploads: a file, with what the person says
// about it, starts a turn like a message; the answer is POST /v1/chat's,
// with the document's id. The file is kept on the bus, where the tool the
// turn calls reads it.
func (in *Ingress) serveUpload(w http.ResponseWriter, r *http.Request) {
	in.api("uploads", http.MethodPost, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		if in.uploads == nil {
			writeJSONError(w, http.StatusServiceUnavailable, "unavailable", "uploads are not enabled on this server")
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
			writeJSONError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
				"Content-Type must be multipart/form-data, with the document in a part named file")
			return
		}
		k := userKey{p.TenantID, p.UserID}
		if !in.uploadLimits.allow(k, in.now()) || !in.limits.allow(k, in.now()) {
			in.metrics.rateLimited.Inc()
			w.Header().Set("Retry-After", "10")
			writeJSONError(w, http.StatusTooManyRequests, "rate_limited",
				fmt.Sprintf("too many uploads; at most %g a minute, wait a moment and try again", in.cfg.UploadsPerMinute))
			return
		}
		form, status, err := in.readUploadForm(w, r)
		if err != nil {
			code := map[int]string{http.StatusRequestEntityTooLarge: "too_large", http.StatusBadRequest: "bad_request"}[status]
			writeJSONError(w, status, code, err.Error())
			return
		}
		kind, mediaType, err := uploads.Sniff(form.data)
		if err != nil {
			writeJSONError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
				"that file is not a document purser reads; it reads "+uploads.Accepted)
			return
		}
		if kind == uploads.KindPDF && uploads.PDFPages(form.data) > in.cfg.MaxUploadPages {
			writeJSONError(w, http.StatusRequestEntityTooLarge, "too_large",
				fmt.Sprintf("that PDF has more than %d pages, the limit for one upload", in.cfg.MaxUploadPages))
			return
		}
		doc, sum := contracts.DocumentID(p.TenantID, p.UserID, form.data)
		ctx, cancel := context.WithTimeout(r.Context(), in.cfg.RequestTimeout)
		err = in.uploads.Put(ctx, p.TenantID, p.UserID, doc, uploads.Manifest{Filename: form.filename, MediaType: mediaType}, form.data)
		cancel()
		if err != nil {
			in.log.Error("upload: store", "tenant", p.TenantID, "err", err)
			writeJSONError(w, http.StatusServiceUnavailable, "unavailable", "the file could not be stored just now; nothing was kept, please try again")
			return
		}
		conv := form.conversation
		if conv == "" {
			conv = DefaultChatConversation(p.UserID)
		}
		t := in.newTurn(senderOf(p), turnInput{ConversationID: conv, Text: form.message})
		t.Upload = &contracts.Upload{DocumentID: doc, Filename: form.filename, Kind: kind, Size: int64(len(form.data)), SHA256: sum}
		in.metrics.framesIn.WithLabelValues("http_upload").Inc()
		in.runTurn(w, r, t, in.cfg.UploadTimeout, &uploaded{DocumentID: doc, Kind: kind, Size: int64(len(form.data))})
	})
}

// uploadForm is what a POST /v1/uploads form carries.
type uploadForm struct {
	data                  []byte
	filename              string
	message, conversation string
}

// readUploadForm reads the multipart form: one file part, and optionally
// message and conversation_id. Any other part is refused, as unknown
// fields are everywhere. The status says which error it is.
func (in *Ingress) readUploadForm(w http.ResponseWriter, r *http.Request) (uploadForm, int, error) {
	var f uploadForm
	limit := in.cfg.MaxUploadBytes
	tooBig := fmt.Errorf("the file is larger than the %s limit for one upload", wording.Size(limit))
	r.Body = http.MaxBytesReader(w, r.Body, limit+uploadFields)
	reader, err := r.MultipartReader()
	if err != nil {
		return f, http.StatusBadRequest, errors.New("the body is not a multipart form")
	}
	seen := map[string]bool{}
	for {
		part, err := reader.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return f, http.StatusRequestEntityTooLarge, tooBig
		}
		if err != nil {
			return f, http.StatusBadRequest, errors.New("the multipart form could not be read")
		}
		name := part.FormName()
		if seen[name] {
			return f, http.StatusBadRequest, fmt.Errorf("the field %q is given twice", name)
		}
		seen[name] = true
		switch name {
		case "file":
			f.data, err = io.ReadAll(io.LimitReader(part, limit+1))
			if errors.As(err, &mbe) || int64(len(f.data)) > limit {
				return f, http.StatusRequestEntityTooLarge, tooBig
			}
			if err != nil {
				return f, http.StatusBadRequest, errors.New("the file could not be read")
			}
			f.filename = contracts.PlainText(part.FileName())
			if f.filename == "" {
				f.filename = "upload"
			}
			f.filename = wording.CutBytes(f.filename, 255)
		case "message", "conversation_id":
			raw, err := io.ReadAll(io.LimitReader(part, uploadFields+1))
			if errors.As(err, &mbe) {
				return f, http.StatusRequestEntityTooLarge, tooBig
			}
			if err != nil || len(raw) > uploadFields {
				return f, http.StatusBadRequest, fmt.Errorf("the field %q is too long", name)
			}
			if name == "conversation_id" {
				f.conversation = strings.TrimSpace(string(raw))
				if f.conversation != "" && !contracts.ValidID(f.conversation) {
					return f, http.StatusBadRequest, errors.New("conversation_id is not a valid id")
				}
				continue
			}
			if f.message, err = contracts.CleanText("message", string(raw)); err != nil {
				return f, http.StatusBadRequest, err
			}
		default:
			return f, http.StatusBadRequest, fmt.Errorf("unknown field %q: the form takes file, message and conversation_id", contracts.PlainText(name))
		}
	}
	if f.data == nil {
		return f, http.StatusBadRequest, errors.New("the form has no file part")
	}
	if len(f.data) == 0 {
		return f, http.StatusBadRequest, errors.New("the file is empty")
	}
	return f, 0, nil
}
