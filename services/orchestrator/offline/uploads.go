package offline

import (
	"encoding/json"

	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// An uploaded file is read first, whatever was said with it; then a
// statement is proposed for import and a receipt as one expense. A
// receipt whose total or currency could not be read is not guessed: the
// answer says what was read and asks for the rest.

// readUpload is the first step of a turn that carries a file.
func readUpload(p orchestrator.Prompt) (orchestrator.Decision, bool) {
	if p.Upload == nil {
		return orchestrator.Decision{}, false
	}
	return call(contracts.ToolReadUpload, contracts.ReadUploadArgs{DocumentID: p.Upload.DocumentID}), true
}

// uploadRead decides once read_upload has answered; what it says is in
// lang ("en" or "fr").
func uploadRead(lang string, last orchestrator.StepRecord) (orchestrator.Decision, bool) {
	if last.Tool != contracts.ToolReadUpload || !last.OK || last.Decision != "" {
		return orchestrator.Decision{}, false
	}
	var u contracts.UploadRead
	if json.Unmarshal(last.Data, &u) != nil {
		return orchestrator.Decision{}, false
	}
	switch {
	case u.Kind == contracts.UploadStatement && u.Statement != nil && u.Statement.Readable && u.Statement.New > 0:
		return call(contracts.ToolImportUpload, contracts.ImportUploadArgs{DocumentID: u.DocumentID}), true
	case u.Kind == contracts.UploadReceipt && u.Receipt != nil && u.Receipt.Total != "" && u.Receipt.Currency != "":
		r := u.Receipt
		item := r.Merchant
		if item == "" {
			item = "receipt " + u.Filename
		}
		args := contracts.AddExpenseArgs{Item: wording.CutRunes(item, 200), Amount: contracts.Amount(r.Total), Currency: &r.Currency, DocumentID: &u.DocumentID}
		if r.Date != "" {
			args.Date = &r.Date
		}
		return call(contracts.ToolAddExpense, args), true
	case u.Kind == contracts.UploadReceipt:
		ask := " What was the total, with its currency? I'll add it as an expense."
		if lang == "fr" {
			ask = " Quel était le total, avec sa devise ? Je l'ajouterai comme dépense."
		}
		return clarify(orchestrator.DescribeStepIn(lang, last) + ask), true
	}
	return answer(orchestrator.DescribeStepIn(lang, last)), true
}
