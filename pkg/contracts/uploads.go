package contracts

// Tools over files people upload (POST /v1/uploads).
const (
	ToolReadUpload   = "read_upload"
	ToolImportUpload = "import_upload"
)

// ReadUploadArgs reads a file the person uploaded.
type ReadUploadArgs struct {
	DocumentID string `json:"document_id" validate:"required,purserid" jsonschema_description:"The document_id of the file the person uploaded with their message."`
}

// ImportUploadArgs imports the transactions of an uploaded statement.
type ImportUploadArgs struct {
	DocumentID string `json:"document_id" validate:"required,purserid" jsonschema_description:"The document_id of an uploaded bank statement, as read_upload returned it."`
}

// Kinds of uploaded document, as read_upload found them.
const (
	UploadStatement  = "statement"
	UploadReceipt    = "receipt"
	UploadUnreadable = "unreadable"
)

// UploadRead is the output of read_upload: what the file is, and what
// importing it (a statement) or adding it (a receipt) would store.
// Problem says why it could not be read (Kind unreadable).
type UploadRead struct {
	DocumentID string       `json:"document_id"`
	Filename   string       `json:"filename"`
	Kind       string       `json:"kind"`
	Statement  *FilePreview `json:"statement,omitempty"`
	Receipt    *ReceiptRead `json:"receipt,omitempty"`
	Problem    string       `json:"problem,omitempty"`
}

// ReceiptRead is what was read off a receipt. Empty fields were not
// found; Unsure says, in words, what the person should check. ReadBy is
// "text" (a PDF's text layer) or "OCR".
type ReceiptRead struct {
	Merchant string        `json:"merchant,omitempty"`
	Date     string        `json:"date,omitempty"`
	Total    string        `json:"total,omitempty"`
	Currency string        `json:"currency,omitempty"`
	ReadBy   string        `json:"read_by"`
	Items    []ReceiptItem `json:"items,omitempty"`
	Unsure   []string      `json:"unsure,omitempty"`
}

// ReceiptItem is one line item as printed.
type ReceiptItem struct {
	Text   string `json:"text"`
	Amount string `json:"amount"`
}

// UploadImported is the output of import_upload.
type UploadImported struct {
	DocumentID string `json:"document_id"`
	Filename   string `json:"filename"`
	// Status is queued (the import started) or duplicate (the same file
	// was imported before; nothing new is added).
	Status string `json:"status"`
}
