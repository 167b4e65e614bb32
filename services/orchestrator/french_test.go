package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// frenchFixture is one tool's arguments, the lookup a change is checked
// with (seen, and missing for a lookup that finds nothing to change) and
// its result, with values that read the same in both languages, so that
// an English word in the French sentences is the server's own.
type frenchFixture struct {
	args, seen, missing, data string
}

const (
	frExpense = `{"id":7,"item":"croissant","amount":{"minor":1250,"currency":"EUR"},"date":"2026-11-22","category":"alimentation"}`
	frEntry   = `{"kind":"expense","id":7,"date":"2026-11-22","description":"croissant","amount":{"minor":-1250,"currency":"EUR"},"category":"alimentation"}`
	frTx      = `{"id":9,"date":"2026-11-20","description":"Boulangerie Paul","amount":{"minor":-830,"currency":"EUR"},"category":"alimentation","review_status":"needs_review"}`
	frMatches = `{"pattern":"paul","range":"this_month","count":2,"entries":[` + frEntry + `],"rule":{"id":1,"pattern":"paul","category":"restaurant"}}`
	frNoMatch = `{"pattern":"paul","count":0}`
	frMail    = `{"id":"m1","from":"banque@example.fr","subject":"Relevé","date":"2026-11-01T09:00:00Z","attachments":["releve.csv"],"new_sender":true}`
	frFile    = `{"filename":"releve.csv","summary":"releve.csv : 3 + 2","readable":true,"new":3,"already":2,"linked":["croissant"],"doubtful":["Paul"]}`
	frOldFile = `{"filename":"releve.csv","summary":"releve.csv","readable":true,"new":0,"already":4}`
	frReceipt = `{"document_id":"d1","filename":"ticket.jpg","kind":"receipt","receipt":{"merchant":"Boulangerie Paul","date":"2026-11-22","total":"12.50","currency":"EUR","read_by":"OCR","items":[{"text":"croissant","amount":"12.50"}],"unsure":["total"]}}`
	frStmt    = `{"document_id":"d2","filename":"releve.csv","kind":"statement","statement":` + frFile + `}`
)

// frenchFixtures has one entry per catalog tool.
var frenchFixtures = map[string]frenchFixture{
	contracts.ToolAddExpense: {args: `{"item":"croissant","amount":"12.50","currency":"EUR","date":"2026-11-22","category":"alimentation","document_id":"d1"}`,
		data: `{"expense":` + frExpense + `}`},
	contracts.ToolUpdateExpense: {args: `{"id":7,"item":"pain","amount":"14","date":"2026-11-21","category":"courses"}`,
		seen: `{"id":7,"expenses":[` + frExpense + `]}`, missing: `{"id":7,"nearby":[` + frExpense + `]}`, data: `{"expense":` + frExpense + `}`},
	contracts.ToolDeleteExpense: {args: `{"id":7}`,
		seen: `{"id":7,"expenses":[` + frExpense + `]}`, missing: `{"id":7}`, data: `{"expense":` + frExpense + `}`},
	contracts.ToolListExpenses: {data: `{"range":"this_month","category":"alimentation","expenses":[` + frExpense + `],"totals":[{"minor":1250,"currency":"EUR"}]}`},
	contracts.ToolGetBalance:   {data: `{"range":"last_month","total":[{"minor":123456,"currency":"EUR"}],"count":3,"transfers":2,"query":"croissant"}`},
	contracts.ToolListLedger:   {data: `{"range":"2026-11","query":"paul","entries":[` + frEntry + `],"more":true}`},
	contracts.ToolSearchGmail:  {data: `{"messages":[` + frMail + `]}`},
	contracts.ToolFetchEmailAttachments: {args: `{"message_id":"m1"}`,
		seen:    `{"message_id":"m1","subject":"Relevé","from":"banque@example.fr","new_sender":true,"files":[` + frFile + `]}`,
		missing: `{"message_id":"m1","subject":"Relevé","from":"banque@example.fr","files":[` + frOldFile + `]}`,
		data:    `{"message_id":"m1","documents":[{"filename":"releve.csv","status":"queued"},{"filename":"octobre.csv","status":"duplicate"}]}`},
	contracts.ToolGetRecentImports: {data: `{"imports":[{"filename":"releve.csv","status":"imported","imported":3,"created_at":"2026-11-02T10:00:00Z"},` +
		`{"filename":"octobre.csv","status":"failed","detail":"CSV","created_at":"2026-11-01T10:00:00Z"},{"filename":"mars.pdf","status":"queued","created_at":"2026-11-01T10:00:00Z"}]}`},
	contracts.ToolGetTransactions:   {data: `{"transactions":[` + frTx + `],"totals":[{"minor":-830,"currency":"EUR"}],"count":2}`},
	contracts.ToolSetPreferences:    {args: `{"currency":"EUR","timezone":"Europe/Paris","date_order":"dmy","language":"fr"}`, data: `{"currency":"EUR","timezone":"Europe/Paris","date_order":"dmy","language":"fr"}`},
	contracts.ToolGetChatHistory:    {data: `{}`},
	contracts.ToolSearch:            {data: `{"results":[{"kind":"entry","id":"e7","title":"Boulangerie Paul","date":"2026-11-22","amount":{"minor":-830,"currency":"EUR"}},{"kind":"document","id":"d2","title":"releve.csv"}],"degraded":"bm25"}`},
	contracts.ToolSummarizeSpending: {data: `{"range":"this_year","by":"category","currencies":[{"currency":"EUR","total":{"minor":5000,"currency":"EUR"},"count":4,"groups":3,"top":[{"name":"alimentation","amount":{"minor":4000,"currency":"EUR"},"count":3},{"name":"","amount":{"minor":1000,"currency":"EUR"},"count":1}]},{"currency":"GBP","total":{"minor":100,"currency":"GBP"},"count":1,"groups":1,"top":[{"name":"transport","amount":{"minor":100,"currency":"GBP"},"count":1}]}]}`},
	contracts.ToolBiggestExpenses:   {data: `{"range":"2026-Q3","expenses":[{"kind":"expense","date":"2026-08-01","description":"croissant","category":"alimentation","amount":{"minor":1250,"currency":"EUR"}}]}`},
	contracts.ToolRecurringPayments: {data: `{"range":"this_year","payments":[{"merchant":"Boulangerie Paul","typical":{"minor":830,"currency":"EUR"},"rhythm":"weekly","count":12,"last":"2026-11-20","next":"2026-11-27"},{"merchant":"Netflix","typical":{"minor":1399,"currency":"EUR"},"rhythm":"monthly","count":11,"last":"2026-11-03","next":"2026-12-03"}]}`},
	contracts.ToolListCategories:    {data: `{"categories":[{"name":"alimentation"},{"name":"transport"},{"name":"jardin","own":true}]}`},
	contracts.ToolAddCategory:       {args: `{"name":"jardin"}`, data: `{"name":"jardin","added":true}`},
	contracts.ToolListRules:         {data: `{"rules":[{"id":1,"pattern":"paul","category":"alimentation"}]}`},
	contracts.ToolSetRule:           {args: `{"pattern":"paul","category":"alimentation"}`, seen: frMatches, missing: `{"pattern":"paul","count":1,"rule":{"id":1,"pattern":"paul","category":"alimentation"}}`, data: `{"rule":{"id":1,"pattern":"paul","category":"alimentation"},"before":"restaurant"}`},
	contracts.ToolDeleteRule:        {args: `{"pattern":"paul"}`, seen: frMatches, missing: frNoMatch, data: `{"rule":{"id":1,"pattern":"paul","category":"alimentation"}}`},
	contracts.ToolRecategorize:      {args: `{"pattern":"paul","category":"alimentation","range":"this_month"}`, seen: frMatches, missing: frNoMatch, data: `{"pattern":"paul","category":"alimentation","range":"this_month","changed":2}`},
	contracts.ToolMatchEntries:      {data: frMatches},
	contracts.ToolUpdateTransaction: {args: `{"id":9,"category":"restaurant","description":"Paul","review":"clear"}`, seen: `{"id":9,"transactions":[` + frTx + `],"count":1}`, missing: `{"id":9}`, data: `{"transaction":` + frTx + `}`},
	contracts.ToolGetLastChange:     {data: `{"change":{"id":3,"kind":"expense_update","before":` + frEntry + `,"after":` + frEntry + `}}`},
	contracts.ToolUndoChange:        {args: `{"change_id":3}`, seen: `{"change":{"id":3,"kind":"import","filename":"releve.csv","transactions":3}}`, missing: `{}`, data: `{"change":{"id":3,"kind":"import","filename":"releve.csv","transactions":3}}`},
	contracts.ToolPreviewImport:     {data: `{"message_id":"m1","files":[` + frFile + `]}`},
	contracts.ToolReadUpload:        {data: frReceipt},
	contracts.ToolImportUpload:      {args: `{"document_id":"d2"}`, data: `{"document_id":"d2","filename":"releve.csv","status":"queued"}`},
}

// englishWords are words of the server's English that French never
// holds; a French sentence that has one was left untranslated.
var englishWords = []string{"expense", "Added", "Updated", "Deleted", "You ", "you ", "Your ", "your ", "I couldn't", "I found", "won't", "Import ", "Delete ",
	"Change ", "Undo", "Done", "Saved", " on ", " in ", " from ", " the ", " and ", " of ", "nothing", "entries", "entry", "matching", "rule ", "category",
	"statement", "ledger", "receipt", "please", "Please", "records", "Total:", "imported", "There is", "What should", "times", "next", "last", "weekly", "monthly",
	"Set ", "Run ", "answers in", "currency", "time zone", "needs review", "read by", "your mail", " is ", " are ", "File ", "Filed", "January", "November"}

// frenchSentences are every sentence of tool's row in French and English:
// its verb (after a no and after a failure), its proposal (before and
// after the lookup, and the answer when the lookup finds nothing to
// change) and its result read aloud.
func frenchSentences(t *testing.T, tool string, fx frenchFixture) map[string][2]string {
	t.Helper()
	row := toolRows[tool]
	env := Env{DefaultCurrency: "EUR"}
	mem := Memory{"entities.message": json.RawMessage(frMail), "entities.upload": json.RawMessage(frStmt)}
	fr, en := State{Locale: "fr-FR", Memory: mem}, State{Locale: "en-GB", Memory: mem}
	both := func(f func(State) string) [2]string { return [2]string{f(fr), f(en)} }
	out := map[string][2]string{
		"after a no": both(func(s State) string {
			return DescribeStepIn(s.Locale, StepRecord{Tool: tool, Decision: "rejected"})
		}),
		"failed": both(func(s State) string { return DescribeStepIn(s.Locale, StepRecord{Tool: tool, Error: "503"}) }),
		"result": both(func(s State) string {
			return DescribeStepIn(s.Locale, StepRecord{Tool: tool, OK: true, Data: json.RawMessage(fx.data)})
		}),
	}
	if row.kind == contracts.KindMutation {
		args, err := canonicalArgs(tool, json.RawMessage(fx.args), fr, env)
		if err != nil {
			t.Fatalf("args %s: %v", fx.args, err)
		}
		out["proposal"] = both(func(s State) string { return summarize(tool, args, s, env) })
		if row.check != nil {
			out["proposal after the lookup"] = both(func(s State) string {
				sum, missing := row.check.seen(args, json.RawMessage(fx.seen), s, env)
				return sum + missing
			})
			out["nothing to change"] = both(func(s State) string {
				sum, missing := row.check.seen(args, json.RawMessage(fx.missing), s, env)
				if sum != "" {
					t.Errorf("lookup %s: proposed %q, want an answer instead", fx.missing, sum)
				}
				return missing
			})
		}
	}
	return out
}

// TestEveryToolSpeaksFrench: for every catalog tool, each sentence the
// server builds for a French speaker is French: it differs from the
// English and holds none of the English's words.
func TestEveryToolSpeaksFrench(t *testing.T) {
	for _, spec := range contracts.Tools() {
		if isClarify(spec.Name) {
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			fx, ok := frenchFixtures[spec.Name]
			if !ok {
				t.Fatalf("no French fixture for catalog tool %q (frenchFixtures)", spec.Name)
			}
			for what, s := range frenchSentences(t, spec.Name, fx) {
				fr, en := s[0], s[1]
				if fr == en {
					t.Errorf("%s: French is the English %q", what, en)
				}
				for _, w := range englishWords {
					if strings.Contains(fr, w) {
						t.Errorf("%s: French %q holds the English %q", what, fr, w)
					}
				}
			}
		})
	}
}

// TestFrenchSentences pins the main French sentences as a person reads
// them: money with a decimal comma and the sign after, dates day first.
func TestFrenchSentences(t *testing.T) {
	env := Env{DefaultCurrency: "EUR"}
	fr := State{Locale: "fr-FR"}
	step := func(tool, data string) string {
		return DescribeStepIn("fr-FR", StepRecord{Tool: tool, OK: true, Data: json.RawMessage(data)})
	}
	seen := func(tool, args, data string) string {
		sum, missing := toolRows[tool].check.seen(json.RawMessage(args), json.RawMessage(data), fr, env)
		return sum + missing
	}
	tests := []struct {
		name, got, want string
	}{
		{"add proposal", summarize(contracts.ToolAddExpense, json.RawMessage(`{"item":"croissant","amount":"12.50","currency":"EUR","date":"2026-11-22"}`), fr, env),
			"Ajouter la dépense « croissant » de 12,50\u00a0€ le 22/11/2026 ?"},
		{"add proposal, category", summarize(contracts.ToolAddExpense, json.RawMessage(`{"item":"pain","amount":"1234.5","currency":"GBP","date":"2026-01-02","category":"courses"}`), fr, env),
			"Ajouter la dépense « pain » de 1\u202f234,50\u00a0£ le 02/01/2026 dans la catégorie courses ?"},
		{"added", step(contracts.ToolAddExpense, `{"expense":`+frExpense+`}`),
			"Dépense #7 ajoutée : croissant, 12,50\u00a0€ le 22/11/2026 (alimentation)."},
		{"update proposal", seen(contracts.ToolUpdateExpense, `{"id":7,"amount":"14"}`, `{"id":7,"expenses":[`+frExpense+`]}`),
			"Modifier la dépense #7 (croissant, 12,50\u00a0€ le 22/11/2026 (alimentation)) : montant 12,50\u00a0€ → 14,00\u00a0€ ?"},
		{"updated", step(contracts.ToolUpdateExpense, `{"expense":`+frExpense+`}`),
			"Dépense #7 modifiée : croissant, 12,50\u00a0€ le 22/11/2026 (alimentation)."},
		{"delete proposal", seen(contracts.ToolDeleteExpense, `{"id":7}`, `{"id":7,"expenses":[`+frExpense+`]}`),
			"Supprimer la dépense #7 : croissant, 12,50\u00a0€ le 22/11/2026 (alimentation) ?"},
		{"no such expense", seen(contracts.ToolDeleteExpense, `{"id":8}`, `{"id":8,"nearby":[`+frExpense+`]}`),
			"Il n'y a pas de dépense #8. Les numéros les plus proches : #7 croissant, 12,50\u00a0€ le 22/11/2026 (alimentation)."},
		{"deleted", step(contracts.ToolDeleteExpense, `{"expense":`+frExpense+`}`),
			"Dépense #7 supprimée : croissant, 12,50\u00a0€ le 22/11/2026 (alimentation)."},
		{"balance", step(contracts.ToolGetBalance, `{"range":"this_month","total":[{"minor":123456,"currency":"EUR"}],"count":3}`),
			"Vous avez dépensé 1\u202f234,56\u00a0€ ce mois-ci, en 3 dépenses."},
		{"balance, one", step(contracts.ToolGetBalance, `{"range":"2026-11","total":[{"minor":830,"currency":"EUR"}],"count":1,"transfers":1}`),
			"Vous avez dépensé 8,30\u00a0€ en novembre 2026, en 1 dépense ; 1 virement entre vos comptes n'est pas compté."},
		{"balance, none", step(contracts.ToolGetBalance, `{"range":"since_2026-11-01","count":0}`),
			"Vous n'avez aucune dépense depuis le 01/11/2026."},
		{"list", step(contracts.ToolListExpenses, `{"range":"this_month","expenses":[`+frExpense+`],"totals":[{"minor":1250,"currency":"EUR"}]}`),
			"Vos dépenses ce mois-ci :\n- #7 22/11/2026 croissant, 12,50\u00a0€ (alimentation)\nTotal : 12,50\u00a0€ (1 dépense)."},
		{"search", step(contracts.ToolSearch, `{"results":[{"kind":"entry","id":"e7","title":"Boulangerie Paul","date":"2026-11-22","amount":{"minor":-830,"currency":"EUR"}}]}`),
			"J'ai trouvé 1 résultat, le plus pertinent d'abord :\n- opération 22/11/2026 Boulangerie Paul, -8,30\u00a0€"},
		{"undo proposal", seen(contracts.ToolUndoChange, `{"change_id":3}`, `{"change":{"id":3,"kind":"expense_add","after":`+frEntry+`}}`),
			"Annuler l'ajout de la dépense #7 (croissant, 12,50\u00a0€ le 22/11/2026 (alimentation)) : la supprimer ?"},
		{"undone", step(contracts.ToolUndoChange, `{"change":{"id":3,"kind":"import","filename":"releve.csv","transactions":30}}`),
			"Annulé : j'ai retiré les 30 transactions importées de releve.csv ; vous pouvez l'importer à nouveau."},
		{"import upload proposal", summarize(contracts.ToolImportUpload, json.RawMessage(`{"document_id":"d2"}`),
			State{Locale: "fr", Memory: Memory{"entities.upload": json.RawMessage(frStmt)}}, env),
			"Importer releve.csv ? releve.csv : 3 + 2. Il contient peut-être ce que vous avez saisi comme Paul."},
		{"import upload", step(contracts.ToolImportUpload, `{"document_id":"d2","filename":"releve.csv","status":"queued"}`),
			"J'importe releve.csv ; vous recevrez une notification une fois l'import terminé."},
		{"categories", step(contracts.ToolListCategories, `{"categories":[{"name":"alimentation"},{"name":"transport"},{"name":"jardin","own":true}]}`),
			"Vos catégories : alimentation, transport. Les vôtres : jardin."},
		{"category proposal", summarize(contracts.ToolAddCategory, json.RawMessage(`{"name":"jardin"}`), fr, env), "Ajouter la catégorie « jardin » ?"},
		{"rules", step(contracts.ToolListRules, `{"rules":[{"id":1,"pattern":"paul","category":"alimentation"}]}`),
			"Vos règles, dans l'ordre où elles sont essayées (le motif le plus long d'abord) :\n- « paul » → alimentation"},
		{"rule proposal", seen(contracts.ToolSetRule, `{"pattern":"paul","category":"alimentation"}`, `{"pattern":"paul","count":0}`),
			"Désormais, classer les opérations correspondant à « paul » dans alimentation ? Elle correspond aujourd'hui à 0 opération ; elles gardent leur catégorie."},
		{"recategorized", step(contracts.ToolRecategorize, `{"pattern":"paul","category":"alimentation","changed":2}`),
			"2 opérations correspondant à « paul » classées dans alimentation."},
		{"after a no", DescribeStepIn("fr-FR", StepRecord{Tool: contracts.ToolAddExpense, Decision: "rejected"}),
			"D'accord, je ne vais pas ajouter cette dépense. Que faut-il changer ? Dites-le-moi, par exemple « 14, pas 12,50 » ou « plutôt hier », et je la proposerai à nouveau."},
		{"failed", DescribeStepIn("fr-FR", StepRecord{Tool: contracts.ToolDeleteExpense, Error: "503"}), "Je n'ai pas pu supprimer cette dépense : 503"},
		{"no model answer", fallbackAnswer("fr-FR", nil), "C'est fait."},
		{"unknown tool", summarize("drop_tables", nil, fr, env), "Lancer drop_tables ?"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

// TestEnglishStaysEnglish: a locale that is not French, or none, keeps
// the server's English.
func TestEnglishStaysEnglish(t *testing.T) {
	for _, locale := range []string{"", "en-GB", "de-DE"} {
		got := summarize(contracts.ToolAddExpense, json.RawMessage(`{"item":"croissant","amount":"12.50","currency":"EUR","date":"2026-11-22"}`),
			State{Locale: locale}, Env{})
		if want := "Add expense 'croissant' €12.50 on 2026-11-22?"; got != want {
			t.Errorf("locale %q: got %q, want %q", locale, got, want)
		}
	}
}

// The turn's own refusals are French for a French speaker too: a yes to
// a proposal nobody knows, an edit that is not valid, and a change asked
// for with read-only access.
func TestFrenchTurnErrors(t *testing.T) {
	env := testEnv(t0)
	s, p := proposeAdd(t, env)
	s.Locale = "fr-FR"
	_, eff := step(t, s, confirmTurn("t2", "pnot-a-proposal", contracts.DecisionApprove, ""), env)
	if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Message != "Cette proposition est inconnue ou déjà décidée : rien n'a été modifié." {
		t.Errorf("unknown proposal: %q", te.Message)
	}
	_, eff = step(t, s, confirmTurn("t3", p.ProposalID, contracts.DecisionEdit, `{"amount":"-3"}`), env)
	if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); !strings.HasPrefix(te.Message, "Ces modifications ne sont pas valides (") ||
		!strings.HasSuffix(te.Message, ") ; la proposition attend toujours.") {
		t.Errorf("invalid edit: %q", te.Message)
	}
	ev := textTurn("t4", "électricité 200 €")
	ev.Turn.Roles, ev.Turn.Locale = []string{"viewer"}, "fr-FR"
	ro, _ := step(t, State{}, ev, env)
	_, eff = step(t, ro, calls(addCall("électricité", "200")), env)
	if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Message != "Votre accès est en lecture seule : je ne peux rien modifier." {
		t.Errorf("read-only: %q", te.Message)
	}
}

// A failure every tool may meet (timed out, rate limited, read-only) is
// said in French from its code, not in the toolrunner's English; a tool's
// own refusal, which only it can word, is quoted as it came.
func TestFrenchFailures(t *testing.T) {
	for _, c := range []struct {
		st   StepRecord
		want string
	}{
		{StepRecord{Tool: contracts.ToolAddExpense, Code: contracts.CodeTimedOut, Error: "It took longer than its time limit, so it was stopped; nothing was changed. It can be tried again."},
			"cela a pris plus de temps que permis, je l'ai arrêté ; rien n'a été modifié. Vous pouvez réessayer."},
		{StepRecord{Tool: contracts.ToolGetBalance, Code: contracts.CodeRateLimited, RetryAfter: 12, Error: "Too many get_balance calls; try again in 12 seconds."},
			"trop de demandes ; réessayez dans 12 s."},
	} {
		got := DescribeStepIn("fr-FR", c.st)
		if !strings.HasPrefix(got, "Je n'ai pas pu ") || !strings.HasSuffix(got, " : "+c.want) {
			t.Errorf("%s failed (%s): %q, want it to end %q", c.st.Tool, c.st.Code, got, c.want)
		}
		if en := DescribeStepIn("en-GB", c.st); !strings.HasSuffix(en, c.st.Error+"'") && !strings.Contains(en, c.st.Error) {
			t.Errorf("in English the failure reads %q, want the toolrunner's words", en)
		}
	}
	own := StepRecord{Tool: contracts.ToolDeleteExpense, Code: contracts.CodeNotFound, Error: "No expense #7."}
	if got := DescribeStepIn("fr-FR", own); !strings.Contains(got, "No expense #7.") {
		t.Errorf("a tool's own refusal in French: %q, want it quoted", got)
	}
}
