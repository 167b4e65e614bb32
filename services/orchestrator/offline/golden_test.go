package offline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

var update = flag.Bool("update", false, "rewrite testdata/decisions.txt.gz from the current code")

// goldenFile holds every decision the model made over the corpus when it
// was written; gzip keeps the tens of thousands of lines small.
const goldenFile = "testdata/decisions.txt.gz"

// TestDecisionsAreUnchanged: whatever the offline model decided for any
// phrasing its tests (and the orchestrator's) know, in any case, spacing,
// currency, locale or conversation, it decides the same now. Work that
// makes the model cheaper must leave every line alone; a change meant to
// alter decisions rewrites the file with -update and shows in review.
func TestDecisionsAreUnchanged(t *testing.T) {
	t.Parallel()
	got := goldenLines(t)
	if *update {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write([]byte(strings.Join(got, "\n") + "\n"))
		zw.Close()
		if err := os.WriteFile(goldenFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %d decisions", len(got))
		return
	}
	f, err := os.Open(goldenFile)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	decided := map[string]string{}
	for _, l := range got {
		k, v, _ := strings.Cut(l, "\t")
		decided[k] = v
	}
	bad, missing := 0, 0
	for _, l := range want {
		k, v, _ := strings.Cut(l, "\t")
		now, ok := decided[k]
		switch {
		case !ok:
			missing++ // a phrasing the tests no longer hold
		case now != v:
			if bad++; bad <= 20 {
				t.Errorf("decision changed for %s:\n got  %s\n want %s", k, now, v)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d decisions changed", bad, len(want))
	}
	if missing > len(want)/10 {
		t.Fatalf("%d of %d cases are no longer in the corpus; rewrite with -update only if that was meant", missing, len(want))
	}
}

// goldenLines runs the model over the corpus, one line per case: what it
// was given, a tab, what it decided; and what the readers underneath made of
// the text (dates, ranges, amounts, French).
func goldenLines(t *testing.T) []string {
	texts, histories, replies := corpus(t)
	var out []string
	line := func(label string, p orchestrator.Prompt) {
		d, err := Model{}.Decide(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, label+" "+strconv.Quote(p.Text)+"\t"+decisionLine(d))
	}
	for _, text := range texts {
		for i, v := range variants(text) {
			cur := []string{"", "GBP", "JPY", "EUR"}[i%4]
			line("cur="+cur, orchestrator.Prompt{Text: v, Now: sunday, Timezone: "Europe/London", Currency: cur})
		}
		line("fr", orchestrator.Prompt{Text: text, Now: sunday, Locale: "fr-FR", Currency: "EUR"})
		line("tues", orchestrator.Prompt{Text: text, Now: sunday.AddDate(0, 3, 2), Currency: "GBP"})
		for i, s := range goldenSteps {
			line("step"+strconv.Itoa(i), orchestrator.Prompt{Text: text, Now: sunday, Steps: []orchestrator.StepRecord{s}})
		}
		out = append(out, "readers "+strconv.Quote(text)+"\t"+readersLine(text))
	}
	for _, h := range histories {
		for _, r := range replies {
			for _, loc := range []string{"", "fr-FR"} {
				p := orchestrator.Prompt{Text: r, Now: sunday, Locale: loc, History: entries(h)}
				line("loc="+loc+" after "+strconv.Quote(strings.Join(h, " | ")), p)
			}
		}
	}
	return out
}

func decisionLine(d orchestrator.Decision) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// readersLine is what the readers under Decide make of text on its own.
func readersLine(text string) string {
	c := clean(text)
	date, rest, ok := findDate(c, sunday)
	amounts, _ := json.Marshal(findAmounts(c))
	var offsets []int
	for _, f := range findAmounts(c) {
		offsets = append(offsets, f.start, f.end)
	}
	return fmt.Sprintf("date=%q rest=%q ok=%v range=%q amounts=%s at=%v french=%v en=%q digits=%q q=%v add=%v",
		date, rest, ok, rangeOf(c, sunday), amounts, offsets, isFrench(orchestrator.Prompt{Text: text}), fromFrench(c),
		spelledToDigits(ungroup(c)), isQuestion(c), wantsAdd(c, sunday, isQuestion(c)))
}

// variants are the ways a person may type the same words: in other
// cases, with stray spaces, as a question, politely.
func variants(text string) []string {
	vs := []string{text, strings.ToUpper(text), strings.ToLower(text), "  " + strings.ReplaceAll(text, " ", "  ") + " ",
		strings.TrimRight(text, "?.! ") + "?", "please " + text, "Hi, " + text, text + " 12.50"}
	if len(text) > 0 {
		r, n := utf8.DecodeRuneInString(text)
		vs = append(vs, strings.ToUpper(string(r))+text[n:])
	}
	return vs
}

// goldenSteps are the tool results a turn may carry on to the model.
var goldenSteps = func() []orchestrator.StepRecord {
	mail, _ := json.Marshal(contracts.MailSearch{Messages: []contracts.MailSummary{{ID: "m42", From: "Visa", Subject: "Your October statement", Attachments: []string{"october.csv"}}}})
	chat, _ := json.Marshal(contracts.ChatHistory{Messages: []contracts.ChatMessage{
		{Role: "user", Text: "my landlord is called Bob"}, {Role: "assistant", Text: "Noted."}, {Role: "user", Text: "what did I say about my landlord?"}}})
	bal, _ := json.Marshal(contracts.Balance{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Count: 2,
		Total: []contracts.Money{{Minor: 1250, Currency: "GBP"}}})
	return []orchestrator.StepRecord{
		{Tool: contracts.ToolSearchGmail, OK: true, Data: mail},
		{Tool: contracts.ToolGetChatHistory, OK: true, Data: chat},
		{Tool: contracts.ToolGetBalance, OK: true, Data: bal},
		{Tool: contracts.ToolGetLastChange, OK: true, Data: json.RawMessage(`{"change":{"id":4,"kind":"add_expense"}}`)},
		{Tool: contracts.ToolAddExpense, Decision: "rejected", Args: json.RawMessage(`{"item":"lunch","amount":"12"}`)},
	}
}()

// entries are history's lines as the model's history: user and assistant
// alternating, the user first.
func entries(history []string) []orchestrator.Entry {
	var h []orchestrator.Entry
	for i, line := range history {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		h = append(h, orchestrator.Entry{Role: role, Text: line})
	}
	return h
}

// corpus gathers the phrasings: every string in this package's tests and
// the orchestrator's, the fuzz corpus, and the turns of the benchmark;
// the histories written in the tests (and the model's own questions);
// and the replies the tests give after a history.
func corpus(t *testing.T) (texts []string, histories [][]string, replies []string) {
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] && len(s) <= 300 && utf8.ValidString(s) && !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
			seen[s] = true
			texts = append(texts, s)
		}
	}
	seenR := map[string]bool{}
	addReply := func(s string) {
		if !seenR[s] {
			seenR[s] = true
			replies = append(replies, s)
		}
	}
	seenH := map[string]bool{}
	addHistory := func(h []string) {
		if k := strings.Join(h, "\x00"); len(h) > 0 && !seenH[k] {
			seenH[k] = true
			histories = append(histories, h)
		}
	}
	consts := map[string]string{"proposedLunch": proposedLunch, "howMuchCoffee": howMuchCoffee, "askAddWhat": askAddWhat,
		"askWhichNum": askWhichNum, "askWhatFix": askWhatFix}
	files, _ := filepath.Glob("*_test.go")
	more, _ := filepath.Glob("../*_test.go")
	files = append(files, more...)
	slices.Sort(files)
	fset := token.NewFileSet()
	for _, name := range files {
		if name == "golden_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if s, err := strconv.Unquote(n.Value); err == nil {
						add(s)
					}
				}
			case *ast.CompositeLit:
				// {[]string{...history}, "reply", "want"}: a row after a history.
				for i, e := range n.Elts {
					hl, ok := e.(*ast.CompositeLit)
					if !ok || i+1 >= len(n.Elts) {
						continue
					}
					if h, ok := stringList(hl, consts); ok {
						if lit, ok := n.Elts[i+1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							addHistory(h)
							addReply(s)
						}
					}
				}
			}
			return true
		})
	}
	for _, name := range slices.Sorted(maps.Keys(consts)) {
		add(consts[name])
	}
	fuzz, _ := filepath.Glob("testdata/fuzz/FuzzDecide/*")
	slices.Sort(fuzz)
	for _, name := range fuzz {
		b, _ := os.ReadFile(name)
		var vals []string
		for _, l := range strings.Split(string(b), "\n") {
			if s, ok := strings.CutPrefix(l, "string("); ok {
				if v, err := strconv.Unquote(strings.TrimSuffix(s, ")")); err == nil {
					vals = append(vals, v)
				}
			}
		}
		if len(vals) == 2 {
			add(vals[0])
			addReply(vals[0])
			addHistory([]string{"add coffee", vals[1]})
		}
	}
	for _, s := range []string{"how much did I spend on groceries this month", "add 12.50 coffee", "yes", "no", "add coffee",
		"what did I spend this month?", "add a taxi ride", "hello", "spent 12.40 on lunch yesterday",
		"combien ai-je dépensé ce mois-ci ?", "ajoute déjeuner 12,50 €", "j'ai dépensé 1 234,56 € pour le loyer hier",
		// Phrasings no test names, for the patterns they alone reach.
		"paid a tenner for parking", "add ninety-nine dollars shoes", "add 12:30 lunch 8.50", "add lunch 9 at 7pm",
		"spent 15 on the 3rd", "add taxi 20 three days ago", "how much in Q3 2025?", "what did I spend in 2025-10?",
		"spending from 1 Oct to 15 Oct", "total since the start of the year", "how much last 2 weeks", "spent on rent in 2024",
		"list my transactions at Tesco", "my spending by shop", "top 5 expenses this year", "compare this month and last month",
		"set my currency to yen", "my time zone is America/New_York", "dates are day first", "reply in French please",
		"transfer 100 to savings", "I owe Sam 20", "page 2", "thanks so much!", "who are you", "remember the wifi code is 1234",
		"what did I say about the plumber?", "how many coffees did I buy last month?", "find my Costco receipts from 2020",
		"where did I pay the tax office", "fix transaction 12: it's rent", "mark 12 as groceries", "undo the last import",
		"always file Spotify under subscriptions", "delete the Spotify rule", "the Unity ones are software",
		"add a category called pets", "show my rules", "ſpent 5 on ſoap", "SPENT £5 ON SOAP YESTERDAY", "add\u00a012,50\u00a0€ café",
		"Mes dépenses de la semaine dernière", "supprime la dépense 3", "annule ça", "qu'est-ce que j'ai dit à propos du loyer ?",
		"bonjour", "merci beaucoup", "montre-moi mes catégories", "j'ai payé 40 € chez Carrefour aujourd'hui"} {
		add(s)
		addReply(s)
	}
	// The model's own questions, as the last line of a history.
	for _, q := range []string{askAddWhat, howMuchCoffee, "What was the £20 for?", "What should I change expense 7 to? " +
		"You can give a new amount, date, item or category.", proposedLunch, "Proposed: Change expense #3: amount 12 → 15?",
		"Proposed: Change expense #3 (lunch, £12.00 on 2026-11-20): item 'lunch' → 'dinner', category food → eating out?",
		"Proposed: Delete expense #3?", "Proposed: Ajouter la dépense « déjeuner » de 1\u202f234,50\u00a0€ le 22/11/2026 dans la catégorie repas ?",
		"An expense can't be a negative amount. How much did you pay for lunch?", askWhichNum} {
		addHistory([]string{"add coffee", q})
		addHistory([]string{"add lunch", proposedLunch, "no", q + " " + orchestrator.AskWhatToChangeIn("en")})
	}
	addHistory([]string{"add lunch 12", proposedLunch, "no", orchestrator.AskWhatToChangeIn("en")})
	addHistory([]string{"ajoute déjeuner 12", "Proposed: Ajouter la dépense « déjeuner » de 12,00\u00a0€ le 22/11/2026 ?", "non", orchestrator.AskWhatToChangeIn("fr")})
	for _, r := range []string{"15", "£15", "no, 15 not 12", "make it yesterday", "dinner not lunch", "in groceries", "lunch",
		"  Lunch  ", "NO, 15 NOT 12", "non, 15 pas 12", "it was 3 euros", "add 12.50 lunch today", "delete expense 4", "what did I spend?"} {
		addReply(r)
	}
	return texts, histories, replies
}

// stringList reads []string{"a", name, …} whose elements are all strings.
func stringList(cl *ast.CompositeLit, consts map[string]string) ([]string, bool) {
	at, ok := cl.Type.(*ast.ArrayType)
	if !ok {
		return nil, false
	}
	if id, ok := at.Elt.(*ast.Ident); !ok || id.Name != "string" {
		return nil, false
	}
	var out []string
	for _, e := range cl.Elts {
		switch e := e.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(e.Value)
			if err != nil {
				return nil, false
			}
			out = append(out, s)
		case *ast.Ident:
			s, ok := consts[e.Name]
			if !ok {
				return nil, false
			}
			out = append(out, s)
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}
