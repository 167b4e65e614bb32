package statements

import (
	"context"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

var _ toolrunner.UploadReader = Parser{}

// ReadUpload implements toolrunner.UploadReader: an uploaded file read in
// the sandbox as a statement.
func (p Parser) ReadUpload(ctx context.Context, name string, data []byte, h toolrunner.ParseHints) (toolrunner.UploadDocument, error) {
	st, err := p.ParseWithHints(ctx, name, data, h)
	if err != nil {
		return toolrunner.UploadDocument{}, err
	}
	return toolrunner.UploadDocument{Kind: contracts.UploadStatement, Statement: st}, nil
}
