package ingress

import (
	"errors"
	"mime"
	"net/http"
	"strconv"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// searchRoutes are the search and the records its results open.
func (in *Ingress) searchRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/v1/search", in.serveSearch)
	mux.HandleFunc("/v1/ledger/entries/{id}", in.serveLedgerEntry)
	mux.HandleFunc("/v1/documents/{id}", in.serveDocument)
}

// serveSearch is GET /v1/search?q=&limit=&kind=: the caller's own ledger
// entries, documents and messages matching q, best first, as
// {"results": [...]}. Any q, however long or odd, finds records or none.
func (in *Ingress) serveSearch(w http.ResponseWriter, r *http.Request) {
	in.api("search", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		q, ok := queryParams(w, r, "q", "limit", "kind")
		if !ok {
			return
		}
		limit := 10
		if s := q.Get("limit"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > contracts.MaxSearchLimit {
				writeJSONError(w, http.StatusBadRequest, "bad_request", "limit: must be a number from 1 to "+strconv.Itoa(contracts.MaxSearchLimit))
				return
			}
			limit = n
		}
		req := contracts.SearchRequest{Query: q.Get("q"), Kind: q.Get("kind"), Limit: limit}
		if len(req.Query) > 20000 {
			req.Query = req.Query[:20000]
		}
		if err := contracts.Validate(&req); err != nil {
			writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		reply, err := ask(r.Context(), in, bus.NotifierSearch(), p.TenantID, p.UserID, req)
		if err != nil {
			in.notifierFailed(w, err)
			return
		}
		if reply.Results == nil {
			reply.Results = []contracts.SearchResult{}
		}
		writeJSON(w, http.StatusOK, reply.SearchResults)
	})
}

// serveLedgerEntry is GET /v1/ledger/entries/{id}: one of the caller's
// own entries ("expense-12", "transaction-40"), as in GET /v1/ledger;
// anyone else's is not found.
func (in *Ingress) serveLedgerEntry(w http.ResponseWriter, r *http.Request) {
	in.api("ledger_entry", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		if _, ok := queryParams(w, r); !ok {
			return
		}
		reply, ok := in.askRecord(w, r, p, contracts.RecordRequest{Kind: contracts.SearchKindEntry, ID: r.PathValue("id")})
		if ok {
			writeJSON(w, http.StatusOK, reply.Entry)
		}
	})
}

// serveDocument is GET /v1/documents/{id}: one of the caller's own
// documents and the entries read from it; with ?download=1, the file
// itself (as an attachment, never shown inline).
func (in *Ingress) serveDocument(w http.ResponseWriter, r *http.Request) {
	in.api("document", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		q, ok := queryParams(w, r, "download")
		if !ok {
			return
		}
		download := q.Get("download") == "1"
		if q.Has("download") && !download {
			writeJSONError(w, http.StatusBadRequest, "bad_request", "download: must be 1")
			return
		}
		reply, ok := in.askRecord(w, r, p, contracts.RecordRequest{Kind: contracts.SearchKindDocument, ID: r.PathValue("id"), File: download})
		if !ok {
			return
		}
		d := reply.Document
		switch {
		case !download:
			writeJSON(w, http.StatusOK, d)
		case !d.FileKept:
			writeJSONError(w, http.StatusGone, "gone", "the file is no longer kept; its record and entries are")
		case d.FileTooLarge:
			writeJSONError(w, http.StatusRequestEntityTooLarge, "too_large", "the file is too large to download here")
		default:
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": d.Filename}))
			w.Header().Set("Content-Security-Policy", "sandbox")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(d.Content)
		}
	})
}

// askRecord asks the notifier for one of p's records, answering the
// errors itself (a record of someone else is not found).
func (in *Ingress) askRecord(w http.ResponseWriter, r *http.Request, p auth.Principal, req contracts.RecordRequest) (contracts.RecordReply, bool) {
	if err := contracts.Validate(&req); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error())
		return contracts.RecordReply{}, false
	}
	reply, err := ask(r.Context(), in, bus.NotifierRecord(), p.TenantID, p.UserID, req)
	var nerr *contracts.InboxError
	switch {
	case errors.As(err, &nerr) && nerr.Code == contracts.InboxNotFound:
		writeJSONError(w, http.StatusNotFound, "not_found", "no such "+req.Kind)
		return contracts.RecordReply{}, false
	case err != nil:
		in.notifierFailed(w, err)
		return contracts.RecordReply{}, false
	case req.Kind == contracts.SearchKindEntry && reply.Entry == nil, req.Kind == contracts.SearchKindDocument && reply.Document == nil:
		in.notifierFailed(w, errors.New("record reply without the record"))
		return contracts.RecordReply{}, false
	}
	return reply, true
}

// recordCites are the citations of records, the sources POST /v1/chat
// shows: a tool's output is never a source there.
func recordCites(all []contracts.Citation) []contracts.Citation {
	var out []contracts.Citation
	for _, c := range all {
		if c.Kind != "" {
			out = append(out, c)
		}
	}
	return out
}
