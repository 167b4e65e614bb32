package contracts

// ToolSearch finds the person's own ledger entries, documents and
// conversation messages by words (and by meaning, where an embeddings
// server is configured).
const ToolSearch = "search"

// Kinds of SearchResult and of record Citation.
const (
	SearchKindEntry    = "entry"
	SearchKindDocument = "document"
	SearchKindMessage  = "message"
)

// MaxSearchLimit bounds the results of one search.
const MaxSearchLimit = 50

// SearchArgs asks the search tool for the person's records matching a
// query: the seeds' chat_semanticSearch(query, limit).
type SearchArgs struct {
	Query string  `json:"query" validate:"required,min=1,max=500" jsonschema_description:"What to look for, in the user's words: a merchant, a person, a subject, e.g. 'Costco', 'landlord', 'tax office'. Leave out dates: give them as from/to."`
	Only  *string `json:"only,omitempty" validate:"omitempty,oneof=entry document message" jsonschema:"enum=entry,enum=document,enum=message" jsonschema_description:"Only ledger entries ('entry'), imported documents such as receipts and statements ('document') or conversation messages ('message'); null for all."`
	From  *string `json:"from,omitempty" validate:"omitempty,date" jsonschema_description:"Only records dated on or after this day, YYYY-MM-DD; null for no bound."`
	To    *string `json:"to,omitempty" validate:"omitempty,date" jsonschema_description:"Only records dated on or before this day, YYYY-MM-DD; null for no bound."`
	Limit *int    `json:"limit,omitempty" validate:"omitempty,gte=1,lte=50" jsonschema_description:"Most results to return; 10 when null."`
}

// SearchResult is one record a search found. ID names it within its
// kind: "expense-12" or "transaction-40" for an entry (as the ledger API
// names it), the document's id, or a message's position. URL is where a
// client opens it (the caller's own records only). Score is in (0, 1],
// higher is better: the reciprocal-rank fusion of the lexical and, when
// used, the semantic ranking, scaled so that first in every ranking is 1.
type SearchResult struct {
	Kind         string  `json:"kind" validate:"required,oneof=entry document message"`
	ID           string  `json:"id" validate:"required,max=128"`
	Title        string  `json:"title" validate:"max=300"`
	Snippet      string  `json:"snippet,omitempty" validate:"max=600"`
	Date         string  `json:"date,omitempty" validate:"omitempty,date"`
	Amount       *Money  `json:"amount,omitempty"`
	Score        float64 `json:"score" validate:"gte=0,lte=1"`
	URL          string  `json:"url" validate:"max=300"`
	Conversation string  `json:"conversation_id,omitempty" validate:"omitempty,purserid"`
}

// Search modes: how the results were ranked.
const (
	SearchLexical = "lexical" // words only
	SearchHybrid  = "hybrid"  // words and meaning, fused by reciprocal rank
)

// SearchResults is the search tool's data and the body of GET /v1/search.
// Mode says how they were ranked; Degraded, when set, says why meaning
// was not used although an embeddings server is configured (it timed out
// or failed: the results are lexical, never none for that reason).
type SearchResults struct {
	Results  []SearchResult `json:"results" validate:"max=50,dive"`
	Mode     string         `json:"mode,omitempty" validate:"omitempty,oneof=lexical hybrid"`
	Degraded string         `json:"degraded,omitempty" validate:"max=200"`
}

// SearchRequest is GET /v1/search asked of the notifier (op search). Any
// query is accepted, however long or odd: it finds records or none. An
// empty Kind means every kind; Limit 0 takes 10.
type SearchRequest struct {
	Query string `json:"q" validate:"max=20000"`
	Kind  string `json:"kind,omitempty" validate:"omitempty,oneof=entry document message"`
	Limit int    `json:"limit,omitempty" validate:"gte=0,lte=50"`
}

// SearchReply answers a SearchRequest.
type SearchReply struct {
	SearchResults
	InboxFailure
}

// RecordRequest asks for one of the person's own records by the kind and
// id a search result or citation names (op record): an entry
// ("expense-12", "transaction-40") or a document; File asks for a
// document's file too.
type RecordRequest struct {
	Kind string `json:"kind" validate:"required,oneof=entry document"`
	ID   string `json:"id" validate:"required,max=128,text"`
	File bool   `json:"file,omitempty"`
}

// RecordReply is the record asked for: Entry or Document.
type RecordReply struct {
	Entry    *LedgerEntry  `json:"entry,omitempty"`
	Document *DocumentView `json:"document,omitempty"`
	InboxFailure
}

// DocumentView is a stored document as its owner sees it: the file's
// name and type, where it came from, what its import did and, when asked
// for and small enough to travel, its content (else FileTooLarge). Entries
// are the ledger entries read from it, at most 200.
type DocumentView struct {
	ID           string        `json:"id" validate:"required,max=128"`
	Filename     string        `json:"filename" validate:"max=300"`
	MediaType    string        `json:"media_type" validate:"max=200"`
	SenderDomain string        `json:"sender_domain,omitempty" validate:"max=300"`
	Status       string        `json:"status" validate:"max=20"`
	Detail       string        `json:"detail,omitempty" validate:"max=2000"`
	Imported     int           `json:"imported"`
	Size         int64         `json:"size"`
	CreatedAt    string        `json:"created_at" validate:"max=40"`
	Entries      []LedgerEntry `json:"entries,omitempty" validate:"max=200,dive"`
	Content      []byte        `json:"content,omitempty"`
	FileKept     bool          `json:"file_kept"`
	FileTooLarge bool          `json:"file_too_large,omitempty"`
}
